// A Deployment of Tessera's CSV run as a `tessera` process on this machine, as an OLM install would run its pod:
// the container's arguments from the CSV, the Deployment's ServiceAccount's token (so only the CSV's permissions),
// POD_NAMESPACE, and the certificate files the kubelet would mount. kwok runs no containers, so the processes stand
// in for them; only where they listen and find the mounted files differ from a pod (later flags override the CSV's).
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { projectRoot } from '../../src/devcluster/binaries.js';
import { freePort } from '../../src/devcluster/processes.js';
import type { KubeClient } from '../../src/runtime/index.js';
import { eventually } from './cluster.js';
import { serviceAccountKubeConfig } from './identities.js';

export interface CsvDeployment {
  name: string;
  spec: {
    selector: { matchLabels: Record<string, string> };
    template: {
      metadata?: { labels?: Record<string, string> };
      spec: { serviceAccountName?: string; containers: { args: string[] }[] };
    };
  };
}

export interface CsvProcess {
  log(): string;
  stop(): Promise<void>;
}

/** The install strategy's Deployments of a CSV. */
export function csvDeployments(csv: { spec?: Record<string, unknown> }): CsvDeployment[] {
  return (csv.spec as { install: { spec: { deployments: CsvDeployment[] } } }).install.spec.deployments;
}

/** The install strategy's Deployment `name` of a CSV. */
export function csvDeployment(csv: { spec?: Record<string, unknown> }, name: string): CsvDeployment {
  const deployment = csvDeployments(csv).find((d) => d.name === name);
  if (!deployment) throw new Error(`the CSV has no Deployment ${name}`);
  return deployment;
}

/**
 * Starts `tessera` with the args of `deployment`'s container plus `overrides`, as its ServiceAccount in `namespace`
 * (a TokenRequest token in a kubeconfig file under `dir`); resolves once its /readyz answers.
 */
export async function startCsvDeployment(o: {
  deployment: CsvDeployment;
  namespace: string;
  admin: KubeConfig;
  client: KubeClient;
  dir: string;
  overrides: string[];
}): Promise<CsvProcess> {
  const { deployment } = o;
  const container = deployment.spec.template.spec.containers[0];
  const serviceAccount = deployment.spec.template.spec.serviceAccountName;
  if (!container || !serviceAccount)
    throw new Error(`Deployment ${deployment.name} has no container or ServiceAccount`);
  const dir = path.join(o.dir, `csv-${deployment.name}`);
  mkdirSync(dir, { recursive: true });
  const kubeconfig = path.join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    (await serviceAccountKubeConfig(o.admin, o.client, o.namespace, serviceAccount)).exportConfig(),
  );
  const probePort = await freePort();
  const logFile = path.join(dir, 'log');
  const fd = openSync(logFile, 'a');
  const child = spawn(
    process.execPath,
    [
      ...['--import', 'tsx', path.join(projectRoot, 'src/cli/main.ts'), ...container.args],
      ...['--kubeconfig', kubeconfig, '--probe-port', String(probePort), ...o.overrides],
      // The CSV's metrics listener (:8443 in every pod, the service CA's certificate) cannot be shared by two
      // processes on one host, and the service CA does not run here: off.
      '--metrics-bind-address=0',
    ],
    { cwd: projectRoot, stdio: ['ignore', fd, fd], env: { ...process.env, POD_NAMESPACE: o.namespace } },
  );
  closeSync(fd);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const proc: CsvProcess = {
    log: () => readFileSync(logFile, 'utf8'),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await exited;
    },
  };
  try {
    await eventually(
      async () => {
        if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}: ${proc.log().slice(-2000)}`);
        const res = await fetch(`http://127.0.0.1:${probePort}/readyz`);
        if (res.status !== 200) throw new Error(`readyz ${res.status}`);
      },
      { timeoutMs: 180_000, intervalMs: 500, what: `${deployment.name} ready` },
    );
  } catch (err) {
    await proc.stop();
    throw err;
  }
  return proc;
}
