// Acting as someone else in an integration test: a kubeconfig for a service account's token (from the TokenRequest
// API, as the kubelet mounts one, or a long-lived token Secret), and a logger that keeps every record as a line, so a
// test can assert that a component running with that identity logged nothing forbidden.
import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'vitest';
import type { KubeClient, Logger } from '../../src/runtime/index.js';

/** A KubeConfig for `admin`'s cluster that authenticates with `token`. */
export function tokenKubeConfig(admin: KubeConfig, name: string, token: string): KubeConfig {
  const c = admin.getCurrentCluster();
  if (!c) throw new Error('admin kubeconfig has no cluster');
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'test', server: c.server, caData: c.caData, caFile: c.caFile }],
    users: [{ name, token }],
    contexts: [{ name, cluster: 'test', user: name }],
    currentContext: name,
  });
  return kc;
}

/** A KubeConfig acting as service account `namespace/name`, with a one-hour token from the TokenRequest API. */
export async function serviceAccountKubeConfig(
  admin: KubeConfig,
  client: KubeClient,
  namespace: string,
  name: string,
): Promise<KubeConfig> {
  const tr = await client.request<{ status: { token: string } }>({
    method: 'POST',
    path: `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  return tokenKubeConfig(admin, name, tr.status.token);
}

/** A logger appending `level msg {fields}` lines (errors as `Name: message`) to `lines`. */
export function lineLogger(lines: string[]): Logger {
  const errors = (_k: string, v: unknown): unknown => (v instanceof Error ? `${v.name}: ${v.message}` : v);
  const at = (level: string) => (obj: object, msg?: string) =>
    void lines.push(`${level} ${msg ?? ''} ${JSON.stringify(obj, errors)}`);
  const logger: Logger = {
    error: at('error'),
    warn: at('warn'),
    info: at('info'),
    debug: at('debug'),
    trace: at('trace'),
    child: () => logger,
  };
  return logger;
}

/** The lines that say an API call was refused. */
export const forbiddenLines = (lines: readonly string[]): string[] =>
  lines.filter((l) => /forbidden|HTTP 403/i.test(l));

/** One row of a `kubectl auth can-i` table: who, verb, resource, namespace ('*': all), the answer wanted. */
export type CanICheck = readonly [
  as: string,
  verb: string,
  resource: string,
  namespace: string,
  expected: 'yes' | 'no',
  subresource?: string,
];

/** Runs kubectl with the admin kubeconfig; rejects on a non-zero exit (its stdout on the error). */
export type Kubectl = (args: string[]) => Promise<string>;

/** `kubectl auth can-i` as the row's subject, against the real API server's authorizer. */
export async function canI(
  kubectl: Kubectl,
  [as, verb, resource, namespace, , subresource]: CanICheck,
): Promise<'yes' | 'no'> {
  const args = ['auth', 'can-i', verb, resource, `--as=${as}`];
  args.push(namespace === '*' ? '--all-namespaces' : `--namespace=${namespace}`);
  if (subresource) args.push(`--subresource=${subresource}`);
  try {
    await kubectl(args);
    return 'yes';
  } catch (err) {
    const out = (err as { stdout?: string }).stdout ?? '';
    if (out.trim() === 'no') return 'no';
    throw err;
  }
}

const describeCheck = (c: CanICheck, answer: string): string =>
  `${c[0].split(':').pop() ?? ''} ${c[1]} ${c[2]}${c[5] ? ` (${c[5]})` : ''} -n ${c[3]}: ${answer}`;

/** Asks every row and expects each answer as wanted; a failure shows the whole table, one line a row. */
export async function expectCanITable(kubectl: Kubectl, checks: readonly CanICheck[]): Promise<void> {
  const actual: string[] = [];
  for (const c of checks) actual.push(describeCheck(c, await canI(kubectl, c)));
  expect(actual).toEqual(checks.map((c) => describeCheck(c, c[4])));
}
