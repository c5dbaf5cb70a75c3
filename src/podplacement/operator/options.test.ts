import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { DEFAULT_OPERATOR_NAMESPACE, LEADER_ELECTION_ID } from '../constants.js';
import { defaultInspectionSlotCaps, inspectionSlotCaps } from '../inspection-slots.js';
import { registryTimeouts } from './image-inspection.js';
import { managerOptions, operatorSettings } from './options.js';

const kubeConfig = new KubeConfig();

describe('operatorSettings', () => {
  it('refuses to write what OLM owns when OLM issues the certificate', () => {
    const tls = { mode: 'olm', certFile: 'c', keyFile: 'k', caSecretName: 's' } as const;
    expect(() => operatorSettings({ kubeConfig, tls, manageValidatingWebhook: true })).toThrow(
      /invalid value for --tls: olm cannot be combined with --manage-validating-webhook or --install-crds/,
    );
    expect(() => operatorSettings({ kubeConfig, tls, installCrds: true })).toThrow(/OLM registers/);
    expect(operatorSettings({ kubeConfig, tls }).runsController).toBe(true);
  });

  it('runs both halves in the default namespace by default', () => {
    expect(operatorSettings({ kubeConfig })).toEqual({
      namespace: DEFAULT_OPERATOR_NAMESPACE,
      runsWebhook: true,
      runsController: true,
    });
  });

  it('runs one half for a split deployment', () => {
    expect(operatorSettings({ kubeConfig, components: 'webhook' })).toMatchObject({
      runsWebhook: true,
      runsController: false,
    });
    expect(operatorSettings({ kubeConfig, components: 'controller' })).toMatchObject({
      runsWebhook: false,
      runsController: true,
    });
  });
});

describe('managerOptions', () => {
  it('elects a leader in the operator namespace only where reconcilers run', () => {
    const all = { kubeConfig, namespace: 'ops' };
    expect(managerOptions(all, operatorSettings(all)).leaderElection).toEqual({
      leaseNamespace: 'ops',
      leaseName: LEADER_ELECTION_ID,
    });
    const webhook = { ...all, components: 'webhook' as const };
    expect(managerOptions(webhook, operatorSettings(webhook)).leaderElection).toBe(false);
    const off = { ...all, leaderElection: false };
    expect(managerOptions(off, operatorSettings(off)).leaderElection).toBe(false);
  });

  it("serves probes where told, else on the runtime's default port, or not at all", () => {
    const port = { kubeConfig, probes: { port: 9000 } };
    expect(managerOptions(port, operatorSettings(port)).probes).toEqual({ port: 9000 });
    // The Manager serves probes unless told false, on ProbeServer's default port (8081).
    const given = { kubeConfig };
    expect(managerOptions(given, operatorSettings(given)).probes).toBeUndefined();
    const none = { kubeConfig, probes: false as const };
    expect(managerOptions(none, operatorSettings(none)).probes).toBe(false);
  });
});

describe('the inspection caps for a number of workers', () => {
  it('leaves a quarter of the workers to cached pods, keeps a tenant to a quarter and a registry to half', () => {
    expect(defaultInspectionSlotCaps(8)).toEqual({
      maxInspections: 6,
      maxInspectionsPerNamespace: 2,
      maxInspectionsPerRegistry: 4,
    });
    expect(defaultInspectionSlotCaps(2).maxInspections).toBe(1);
    expect(defaultInspectionSlotCaps(1)).toEqual({
      maxInspections: 1,
      maxInspectionsPerNamespace: 1,
      maxInspectionsPerRegistry: 1,
    });
    expect(inspectionSlotCaps({ maxInspectionsPerNamespace: 5 }, 8).maxInspectionsPerNamespace).toBe(5);
  });
});

describe('registryTimeouts', () => {
  it('gives up on a registry request before the pod deadline does', () => {
    expect(registryTimeouts(15_000)).toEqual({ connectTimeoutMs: 5_000, attemptTimeoutMs: 10_000 });
  });

  it('stays within its floors and caps', () => {
    expect(registryTimeouts(300)).toEqual({ connectTimeoutMs: 500, attemptTimeoutMs: 1_000 });
    expect(registryTimeouts(600_000)).toEqual({ connectTimeoutMs: 10_000, attemptTimeoutMs: 30_000 });
  });
});
