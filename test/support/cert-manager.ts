// cert-manager as OLM v1's cert-manager webhook provider uses it (operator-controller v1.11.0,
// rukpak/render/certproviders/certmanager.go): for a bundle's webhook Deployment a self-signed Issuer and a leaf
// Certificate with `isCA: false`, usage server auth, CN `<service>.<namespace>` and the Service's DNS names. A
// self-signed issuer signs the certificate with its own key, so the Secret's `ca.crt` is the certificate itself.
// startCertManager runs cert-manager v1.21 (hack/cert-manager) on the local control plane; certManagerCertificate
// renders the Issuer and Certificate as OLM v1 does; certManagerSelfSignedSecret makes the Secret cert-manager would
// write, for unit tests.
import { webcrypto } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
// tsyringe (under @peculiar/x509) needs the Reflect metadata polyfill first.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { CERT_MANAGER_TEST_BINARIES, ensureBinaries } from '../../src/devcluster/binaries.js';
import type { DevCluster } from '../../src/devcluster/cluster.js';
import {
  type ComponentProcess,
  logTail,
  spawnComponent,
  stopProcess,
  waitUntilHealthy,
} from '../../src/devcluster/processes.js';
import { waitForCrdsEstablished } from './cluster.js';

type CryptoKeyPair = webcrypto.CryptoKeyPair;

export interface CertManagerSecret {
  apiVersion: 'v1';
  kind: 'Secret';
  type: 'kubernetes.io/tls';
  metadata: { name: string; namespace: string; annotations: Record<string, string> };
  data: Record<string, string>;
}

const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
const b64 = (text: string): string => Buffer.from(text).toString('base64');

/** The Secret `name` in `namespace` as cert-manager issues it for a Service `service` through a self-signed Issuer. */
export async function certManagerSelfSignedSecret(o: {
  name: string;
  namespace: string;
  service: string;
  issuer?: string;
}): Promise<CertManagerSecret> {
  x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
  const keys = (await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as CryptoKeyPair;
  const host = `${o.service}.${o.namespace}`;
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    // Positive: the first bit clear.
    serialNumber: `1${Buffer.from(webcrypto.getRandomValues(new Uint8Array(15))).toString('hex')}`,
    name: `CN=${host}`,
    notBefore: new Date(now - 60 * 60 * 1000),
    notAfter: new Date(now + 2 * 365 * 24 * 60 * 60 * 1000),
    signingAlgorithm: algorithm,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
        true,
      ),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(
        [host, `${host}.svc`, `${host}.svc.cluster.local`].map((value) => ({ type: 'dns' as const, value })),
      ),
    ],
  });
  const certPem = `${cert.toString('pem')}\n`;
  const keyDer = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey);
  const keyPem = `-----BEGIN PRIVATE KEY-----\n${(
    Buffer.from(keyDer)
      .toString('base64')
      .match(/.{1,64}/g) ?? []
  ).join('\n')}\n-----END PRIVATE KEY-----\n`;
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/tls',
    metadata: {
      name: o.name,
      namespace: o.namespace,
      annotations: {
        'cert-manager.io/certificate-name': o.name,
        'cert-manager.io/common-name': host,
        'cert-manager.io/issuer-group': 'cert-manager.io',
        'cert-manager.io/issuer-kind': 'Issuer',
        'cert-manager.io/issuer-name': o.issuer ?? `${o.name}-selfsigned-issuer`,
      },
    },
    data: { 'ca.crt': b64(certPem), 'tls.crt': b64(certPem), 'tls.key': b64(keyPem) },
  };
}

export interface CertManager {
  readonly process: ComponentProcess;
  logs(lines?: number): string;
  stop(): Promise<void>;
}

/**
 * Applies cert-manager's CRDs to `cluster` and starts its control loops and CA injector (one process, the admin
 * kubeconfig); resolves once its informers have synced. Builds it first if it is missing (minutes, once). Call
 * `stop()` in afterAll, before stopping the cluster.
 */
export async function startCertManager(cluster: DevCluster): Promise<CertManager> {
  const binaries = await ensureBinaries(['kubectl', ...CERT_MANAGER_TEST_BINARIES]);
  const dir = path.join(cluster.stateDir, 'cert-manager');
  mkdirSync(dir, { recursive: true });
  const kubectl = async (args: string[]): Promise<string> =>
    (
      await promisify(execFile)(binaries.kubectl, ['--kubeconfig', cluster.kubeconfigPath, ...args], {
        // The CRDs' OpenAPI schemas, read back to see them Established, are megabytes.
        maxBuffer: 64 * 1024 * 1024,
      })
    ).stdout;
  await kubectl(['apply', '--server-side', ...binaries.certManagerCrds.flatMap((f) => ['-f', f])]);
  const names = binaries.certManagerCrds.map(
    (f) => `crd/${/^\s*name:\s*(\S+)/m.exec(readFileSync(f, 'utf8'))?.[1] ?? path.basename(f)}`,
  );
  await waitForCrdsEstablished(kubectl, names);
  // Its ClusterIssuers' namespace, which the issuers' loops watch for Secrets.
  await kubectl(['create', 'namespace', 'cert-manager']);
  const proc = spawnComponent({
    name: 'cert-manager',
    binary: binaries['cert-manager'],
    args: ['--kubeconfig', cluster.kubeconfigPath],
    logFile: path.join(dir, 'cert-manager.log'),
  });
  try {
    await waitUntilHealthy(
      proc,
      async () => readFileSync(proc.logFile, 'utf8').includes('Starting workers'),
      120_000,
    );
  } catch (err) {
    await stopProcess(proc);
    throw err;
  }
  return { process: proc, logs: (lines = 40) => logTail(proc.logFile, lines), stop: () => stopProcess(proc) };
}

/**
 * The Issuer and Certificate OLM v1 renders for a webhook Deployment whose Service is `service` (certificate and
 * Secret `<service>-cert`, issuer `<that>-selfsigned-issuer`).
 */
export function certManagerCertificate(o: { namespace: string; service: string }): {
  issuer: object;
  certificate: object;
} {
  const name = `${o.service}-cert`;
  const issuerName = `${name}-selfsigned-issuer`;
  const host = `${o.service}.${o.namespace}`;
  return {
    issuer: {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: { name: issuerName, namespace: o.namespace },
      spec: { selfSigned: {} },
    },
    certificate: {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: { name, namespace: o.namespace },
      spec: {
        secretName: name,
        commonName: host,
        usages: ['server auth'],
        isCA: false,
        dnsNames: [host, `${host}.svc`, `${host}.svc.cluster.local`],
        issuerRef: { name: issuerName },
        duration: '17520h0m0s',
        renewBefore: '24h0m0s',
      },
    },
  };
}
