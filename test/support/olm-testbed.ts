// The private cluster the OLM tests install Tessera's CSV on. kwok runs no containers, so the CSV's Deployments run
// as `tessera` processes on this machine (csv-process.ts), and kube-apiserver reaches their Services through a
// ServiceRouter (its egress proxy, src/devcluster/service-router.ts): each admission and conversion call crosses
// the same TLS hop as in a cluster. Beside them runs what issues the webhook certificate (OLM v0 itself, or
// cert-manager for OLM v1's provider); its log and every process's log go into the message of a failed wait.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll } from 'vitest';
import type { DevCluster } from '../../src/devcluster/cluster.js';
import { ServiceRouter } from '../../src/devcluster/service-router.js';
import { KubeClient } from '../../src/runtime/index.js';
import { eventually, startTestCluster } from './cluster.js';
import { startCsvDeployment, type CsvDeployment, type CsvProcess } from './csv-process.js';
import { forbiddenLines } from './identities.js';

/** What issues the webhook certificate: started once the cluster is up, stopped before it. */
export interface CertificateIssuer {
  logs(): string;
  stop(): Promise<void>;
}

export interface OlmTestbed<I extends CertificateIssuer> {
  readonly cluster: DevCluster;
  readonly router: ServiceRouter;
  readonly admin: KubeConfig;
  readonly client: KubeClient;
  readonly issuer: I;
  /** Runs `deployment` as the CSV says (its ServiceAccount, in the testbed's namespace) plus `overrides`. */
  startDeployment(deployment: CsvDeployment, overrides: string[]): Promise<CsvProcess>;
  /** The object at `apiPath`, read as the cluster's admin. */
  get<T>(apiPath: string): Promise<T>;
  /** The HTTP status a GET of `apiPath` answers with: 200, or the refusal's (404 once the object is gone). */
  getStatus(apiPath: string): Promise<number | undefined>;
  /** `eventually`, every 500 ms; a failure carries the logs of the processes and of the issuer. */
  waitFor<T>(what: string, check: () => Promise<T>, timeoutMs?: number): Promise<T>;
  /**
   * What a passing run must not leave behind: the Services kube-apiserver dialled with no route to a process, and
   * the log lines of every started Deployment saying the API refused it (a permission the CSV does not grant),
   * each after its Deployment's name.
   */
  leftovers(): { unrouted: string[]; forbidden: string[] };
  /** Stops everything (the router first), then the cluster, wiped. */
  stop(): Promise<void>;
}

interface OlmTestbedOptions<I extends CertificateIssuer> {
  /** The cluster's name (uniqueName). */
  name: string;
  /** Where the CSV's processes run. */
  namespace: string;
  /** The issuer, in failure messages. */
  issuerName: string;
  startIssuer: (cluster: DevCluster) => Promise<I>;
}

/**
 * Call at module level: starts the testbed before the tests and stops it after them. Its members are valid inside
 * tests.
 */
export function useOlmTestbed<I extends CertificateIssuer>(o: OlmTestbedOptions<I>): OlmTestbed<I> {
  let bed: OlmTestbed<I> | undefined;
  beforeAll(async () => {
    bed = await startOlmTestbed(o);
  }, 900_000);
  afterAll(async () => {
    await bed?.stop();
  }, 120_000);
  const started = (): OlmTestbed<I> => {
    if (!bed) throw new Error('the OLM testbed has not started: use it inside tests, after beforeAll');
    return bed;
  };
  return {
    get cluster() {
      return started().cluster;
    },
    get router() {
      return started().router;
    },
    get admin() {
      return started().admin;
    },
    get client() {
      return started().client;
    },
    get issuer() {
      return started().issuer;
    },
    startDeployment: (deployment, overrides) => started().startDeployment(deployment, overrides),
    get: (apiPath) => started().get(apiPath),
    getStatus: (apiPath) => started().getStatus(apiPath),
    leftovers: () => started().leftovers(),
    waitFor: (what, check, timeoutMs) => started().waitFor(what, check, timeoutMs),
    stop: () => started().stop(),
  };
}

/**
 * Starts a private cluster whose apiserver dials Services through a ServiceRouter, then the issuer; if a step
 * fails, stops what had started.
 */
async function startOlmTestbed<I extends CertificateIssuer>(o: OlmTestbedOptions<I>): Promise<OlmTestbed<I>> {
  // Short: Unix socket paths are limited to ~107 bytes.
  const routerDir = mkdtempSync(path.join(os.tmpdir(), 'svcr-'));
  const processes: (CsvProcess & { deployment: string })[] = [];
  let router: ServiceRouter | undefined;
  let cluster: DevCluster | undefined;
  let client: KubeClient | undefined;
  let issuer: I | undefined;
  const stop = async (): Promise<void> => {
    // The router first: the apiserver's keep-alive connections through it would hold the webhook server open.
    await router?.close();
    await Promise.allSettled(processes.map((p) => p.stop()));
    await issuer?.stop();
    await client?.close();
    await cluster?.stop({ wipe: true });
    rmSync(routerDir, { recursive: true, force: true });
  };
  try {
    router = await ServiceRouter.listen(path.join(routerDir, 's.sock'));
    cluster = await startTestCluster({
      name: o.name,
      nodes: 'default',
      serviceRouterSocket: router.socketPath,
    });
    const admin = await cluster.kubeConfig();
    client = new KubeClient(admin);
    issuer = await o.startIssuer(cluster);
    const started = { router, cluster, client, issuer };
    return {
      ...started,
      admin,
      async startDeployment(deployment, overrides) {
        const proc = await startCsvDeployment({
          deployment,
          overrides,
          namespace: o.namespace,
          admin,
          client: started.client,
          dir: started.cluster.stateDir,
        });
        processes.push({ ...proc, deployment: deployment.name });
        return proc;
      },
      get: <T>(apiPath: string) => started.client.request<T>({ method: 'GET', path: apiPath }),
      getStatus: (apiPath) =>
        started.client.request({ method: 'GET', path: apiPath }).then(
          () => 200,
          (err: { statusCode?: number }) => err.statusCode,
        ),
      leftovers: () => ({
        unrouted: [...started.router.unrouted],
        forbidden: processes.flatMap((p) =>
          forbiddenLines(p.log().split('\n')).map((line) => `${p.deployment}: ${line}`),
        ),
      }),
      async waitFor(what, check, timeoutMs = 180_000) {
        try {
          return await eventually(check, { timeoutMs, intervalMs: 500, what });
        } catch (err) {
          const logs = processes.map((p) => `--- operator\n${p.log().slice(-3000)}`).join('\n');
          throw new Error(
            `${(err as Error).message}\n${logs}\n--- ${o.issuerName}\n${started.issuer.logs()}`,
            { cause: err },
          );
        }
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
