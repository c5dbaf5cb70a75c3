// The one way a command loads the kubeconfig its --kubeconfig flag names, and applies oc's global connection flags
// over it. @kubernetes/client-node is imported on the first call, not with the runtime: importing it costs most of a
// second, which a command that never talks to a cluster must not pay. A long-running process whose kubeconfig is
// plain (server, CA, client certificate or token, or the pod's service account) does not import it at all
// (loadKubeConnection): its generated API would stay in memory unused.
import { existsSync, readFileSync } from 'node:fs';
import type https from 'node:https';
import { isIPv6 } from 'node:net';
import path from 'node:path';
import type { Cluster, Context, KubeConfig, User } from '@kubernetes/client-node';
import { InvalidArgumentError, errorMessage } from './errors.js';

/**
 * oc's (kubectl's) global connection flags, applied over the kubeconfig as client-go's clientcmd applies
 * `ConfigOverrides` (k8s.io/cli-runtime genericclioptions.ConfigFlags). An empty string is no override, as there.
 */
export interface ConnectionOverrides {
  /** --context: the kubeconfig context to use instead of current-context. */
  readonly context?: string | undefined;
  /** --server: replaces the server of the context's cluster, and its tls-server-name. */
  readonly server?: string | undefined;
  /** --certificate-authority: a PEM file; replaces the cluster's CA and turns insecure-skip-tls-verify off. */
  readonly certificateAuthority?: string | undefined;
  /** --insecure-skip-tls-verify: do not verify the server's certificate; drops the cluster's CA. */
  readonly insecureSkipTlsVerify?: boolean | undefined;
  /** --token: the bearer token; it replaces every other credential of the context's user (see resolveConnection). */
  readonly token?: string | undefined;
  /** --as: the user to impersonate (header Impersonate-User). */
  readonly impersonateUser?: string | undefined;
  /** --as-uid: the UID to impersonate (Impersonate-Uid); needs a user to impersonate. */
  readonly impersonateUid?: string | undefined;
  /** --as-group, repeatable: the groups to impersonate (one Impersonate-Group header each); need a user. */
  readonly impersonateGroups?: readonly string[] | undefined;
}

/** What a KubeConfig holds, as client-node parsed it. */
export interface KubeConfigEntries {
  readonly contexts: readonly Context[];
  readonly clusters: readonly Cluster[];
  readonly users: readonly User[];
  readonly currentContext: string | undefined;
}

/** The connection a command makes once the overrides are applied: one context, its cluster and user. */
export interface ResolvedConnection {
  readonly context: Context;
  readonly cluster: Cluster;
  readonly user: User;
  /** Headers client-node does not know of (it sends only Impersonate-User, from `user.impersonateUser`). */
  readonly headers: Readonly<Record<string, string | readonly string[]>>;
}

/** Names of the entries made up when the kubeconfig has none for the chosen context (kubectl's empty ones). */
const NO_CONTEXT = 'tessera-flags';

const given = (value: string | undefined): value is string => value !== undefined && value !== '';

/**
 * Applies `overrides` to the kubeconfig's chosen context, as clientcmd's DirectClientConfig does: --context picks
 * the context (it must exist); --server replaces the cluster's server and clears its tls-server-name;
 * --certificate-authority replaces the CA and clears insecure-skip-tls-verify, --insecure-skip-tls-verify clears the
 * CA, and the two together are refused, as client-go's transport refuses them ("specifying a root certificates file
 * with the insecure flag is not allowed"); --as replaces the kubeconfig's `as`; --as-group and --as-uid without a
 * user to impersonate are refused, as clientcmd's validation refuses them.
 *
 * One deliberate difference: client-go adds --token to the user's other credentials, so with a kubeconfig that
 * holds a client certificate the API server still sees the certificate's user (its x509 authenticator runs before
 * the token ones; kubernetes/kubectl#1657). Here --token replaces the user's certificate, exec plugin, auth provider,
 * basic auth and token file: the token's identity is the one the server sees.
 */
export function resolveConnection(
  entries: KubeConfigEntries,
  overrides: ConnectionOverrides,
): ResolvedConnection {
  const contextName = given(overrides.context) ? overrides.context : entries.currentContext;
  let context = entries.contexts.find((c) => c.name === contextName);
  if (!context && given(contextName)) {
    const known = entries.contexts.map((c) => `"${c.name}"`).join(', ');
    throw given(overrides.context)
      ? new InvalidArgumentError(
          '--context',
          `context "${contextName}" does not exist${known ? ` (the kubeconfig has ${known})` : ''}`,
        )
      : new InvalidArgumentError(
          '--kubeconfig',
          `its current-context "${contextName}" is not one of its contexts${known ? ` (${known})` : ''}; give --context`,
        );
  }
  // No context chosen at all: kubectl goes on with empty entries, which the flags may fill (--server, --token).
  context ??= { name: NO_CONTEXT, cluster: NO_CONTEXT, user: NO_CONTEXT };

  let cluster: Cluster = entries.clusters.find((c) => c.name === context.cluster) ?? {
    name: context.cluster,
    server: '',
    skipTLSVerify: false,
  };
  if (given(overrides.server)) cluster = { ...cluster, server: overrides.server, tlsServerName: undefined };
  if (given(overrides.certificateAuthority) || overrides.insecureSkipTlsVerify === true)
    cluster = {
      ...cluster,
      caFile: given(overrides.certificateAuthority) ? overrides.certificateAuthority : undefined,
      caData: undefined,
      skipTLSVerify: overrides.insecureSkipTlsVerify === true,
    };
  if (cluster.server === '')
    throw new InvalidArgumentError(
      '--server',
      `the kubeconfig has no server for ${context.name === NO_CONTEXT ? 'a current context (it sets no current-context)' : `context "${context.name}"`}; give --server or --context`,
    );
  // client-node keeps an absent field as undefined or null.
  if (cluster.skipTLSVerify && (Boolean(cluster.caFile) || Boolean(cluster.caData)))
    throw new InvalidArgumentError(
      given(overrides.certificateAuthority) ? '--insecure-skip-tls-verify' : '--kubeconfig',
      given(overrides.certificateAuthority)
        ? 'specifying a root certificates file with the insecure flag is not allowed: give --certificate-authority or --insecure-skip-tls-verify, not both'
        : `cluster "${cluster.name}" sets insecure-skip-tls-verify and a certificate authority; specifying a root certificates file with the insecure flag is not allowed (give --insecure-skip-tls-verify or --certificate-authority to pick one)`,
    );

  let user: User = entries.users.find((u) => u.name === context.user) ?? { name: context.user };
  if (given(overrides.token))
    user = { name: user.name, token: overrides.token, impersonateUser: user.impersonateUser };
  if (given(overrides.impersonateUser)) user = { ...user, impersonateUser: overrides.impersonateUser };

  const groups = (overrides.impersonateGroups ?? []).filter(given);
  const headers: Record<string, string | readonly string[]> = {};
  if (groups.length > 0 || given(overrides.impersonateUid)) {
    if (!given(user.impersonateUser ?? undefined))
      throw new InvalidArgumentError(
        groups.length > 0 ? '--as-group' : '--as-uid',
        `requesting ${groups.length > 0 ? 'groups' : 'a uid'} without impersonating a user; give --as too`,
      );
    if (groups.length > 0) headers['Impersonate-Group'] = groups;
    if (given(overrides.impersonateUid)) headers['Impersonate-Uid'] = overrides.impersonateUid;
  }
  return { context, cluster, user, headers };
}

/** `list` with `entry` in place of the one of its name, or added. */
function replaced<T extends { readonly name: string }>(list: readonly T[], entry: T): T[] {
  return [...list.filter((e) => e.name !== entry.name), entry];
}

/**
 * `kubeConfig` with `overrides` applied (resolveConnection): a new KubeConfig whose current context is the chosen
 * one, whose applyToHTTPSOptions (the path of every request KubeClient and the alerts reader make) also sets the
 * impersonation headers client-node does not know. A --certificate-authority file that cannot be read is an
 * InvalidArgumentError naming the flag.
 */
export async function applyConnectionOverrides(
  kubeConfig: KubeConfig,
  overrides: ConnectionOverrides,
): Promise<KubeConfig> {
  const resolved = resolveConnection(
    {
      contexts: kubeConfig.getContexts(),
      clusters: kubeConfig.getClusters(),
      users: kubeConfig.getUsers(),
      currentContext: kubeConfig.getCurrentContext(),
    },
    overrides,
  );
  if (given(overrides.certificateAuthority)) {
    try {
      readFileSync(overrides.certificateAuthority);
    } catch (err) {
      throw new InvalidArgumentError(
        '--certificate-authority',
        `cannot read ${overrides.certificateAuthority} (${errorMessage(err)}); give a PEM file`,
      );
    }
  }
  const { KubeConfig } = await import('@kubernetes/client-node');
  const extraHeaders = resolved.headers;
  class OverriddenKubeConfig extends KubeConfig {
    override async applyToHTTPSOptions(
      opts: Parameters<KubeConfig['applyToHTTPSOptions']>[0],
    ): Promise<void> {
      await super.applyToHTTPSOptions(opts);
      if (Object.keys(extraHeaders).length === 0) return;
      const headers: Record<string, unknown> = { ...opts.headers };
      for (const [name, value] of Object.entries(extraHeaders))
        headers[name] = typeof value === 'string' ? value : [...value];
      opts.headers = headers as typeof opts.headers;
    }
  }
  const result = new OverriddenKubeConfig();
  result.loadFromOptions({
    contexts: replaced(kubeConfig.getContexts(), resolved.context),
    clusters: replaced(kubeConfig.getClusters(), resolved.cluster),
    users: replaced(kubeConfig.getUsers(), resolved.user),
    currentContext: resolved.context.name,
  });
  return result;
}

/**
 * `file` when given (the --kubeconfig flag), else client-node's default chain: $KUBECONFIG, ~/.kube/config, then
 * the pod's service account (in-cluster). A file that cannot be read or parsed is an InvalidArgumentError naming
 * `flag`. With `overrides` (oc's connection flags), they are applied as applyConnectionOverrides says.
 */
export async function loadKubeConfig(
  file: string | undefined,
  flag = '--kubeconfig',
  overrides?: ConnectionOverrides,
): Promise<KubeConfig> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kubeConfig = new KubeConfig();
  if (!file) {
    kubeConfig.loadFromDefault();
  } else {
    try {
      kubeConfig.loadFromFile(file);
    } catch (err) {
      throw new InvalidArgumentError(
        flag,
        `cannot load ${file} (${errorMessage(err)}); give a kubeconfig file`,
      );
    }
  }
  return overrides ? applyConnectionOverrides(kubeConfig, overrides) : kubeConfig;
}

/**
 * What KubeClient (and so a Manager) needs of a kubeconfig: the current cluster's server and context, and the TLS
 * and auth options of each request. A client-node KubeConfig is one; loadKubeConnection may return a lighter one.
 */
export interface KubeConnection {
  getCurrentCluster(): { readonly server: string } | null;
  getCurrentContext(): string;
  applyToHTTPSOptions(opts: https.RequestOptions): Promise<void>;
}

/** Where a pod's service account credentials are mounted (client-node's and client-go's in-cluster config). */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
/** client-node's name of the in-cluster context. */
const IN_CLUSTER_CONTEXT_NAME = 'inClusterContext';

/** The kubeconfig keys the plain connection reads; any other (exec, auth-provider, as, proxy-url...) needs client-node. */
const PLAIN_CLUSTER_KEYS = new Set([
  'server',
  'certificate-authority',
  'certificate-authority-data',
  'insecure-skip-tls-verify',
  'tls-server-name',
]);
const PLAIN_USER_KEYS = new Set([
  'token',
  'client-certificate',
  'client-certificate-data',
  'client-key',
  'client-key-data',
]);

interface PlainCluster {
  readonly server: string;
  readonly caFile?: string;
  readonly caData?: string;
  readonly skipTLSVerify: boolean;
  readonly tlsServerName?: string;
}
interface PlainUser {
  readonly token?: string;
  /** Read again for each request's headers: a projected service account token rotates. */
  readonly tokenFile?: string;
  readonly certFile?: string;
  readonly certData?: string;
  readonly keyFile?: string;
  readonly keyData?: string;
}

/** A file's bytes, else base64 data, as client-node's bufferFromFileOrString. */
function fileOrData(file: string | undefined, data: string | undefined): Buffer | undefined {
  if (file) return readFileSync(file);
  return data ? Buffer.from(data, 'base64') : undefined;
}

/** Applies what client-node's KubeConfig applies for the same cluster and user (its applyToHTTPSOptions). */
class PlainKubeConnection implements KubeConnection {
  constructor(
    private readonly context: string,
    private readonly cluster: PlainCluster,
    private readonly user: PlainUser,
  ) {}

  getCurrentCluster(): PlainCluster {
    return this.cluster;
  }

  getCurrentContext(): string {
    return this.context;
  }

  applyToHTTPSOptions(opts: https.RequestOptions): Promise<void> {
    const { cluster, user } = this;
    if (cluster.skipTLSVerify) opts.rejectUnauthorized = false;
    if (cluster.tlsServerName) opts.servername = cluster.tlsServerName;
    const ca = fileOrData(cluster.caFile, cluster.caData);
    if (ca) opts.ca = ca;
    const cert = fileOrData(user.certFile, user.certData);
    if (cert) opts.cert = cert;
    const key = fileOrData(user.keyFile, user.keyData);
    if (key) opts.key = key;
    const token = user.tokenFile ? readFileSync(user.tokenFile, 'utf8') : user.token;
    if (token) opts.headers = { ...opts.headers, Authorization: `Bearer ${token}` };
    return Promise.resolve();
  }
}

const record = (value: unknown): Record<string, unknown> | undefined =>
  value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
const text = (value: unknown): string | undefined => (typeof value === 'string' && value ? value : undefined);

/** The entry named `name` of a kubeconfig list (`clusters`, `users`), its `field` object. */
function entry(doc: Record<string, unknown>, list: string, field: string, name: unknown) {
  const items = doc[list];
  if (!Array.isArray(items)) return undefined;
  return record(items.map(record).find((item) => item?.name === name)?.[field]);
}

/**
 * The plain connection of kubeconfig text, or undefined when it needs more than PlainKubeConnection reads (or is not
 * a valid kubeconfig: client-node then says what is wrong). Relative paths are relative to the file's folder.
 */
export async function plainConnectionOf(
  yamlText: string,
  folder: string,
): Promise<KubeConnection | undefined> {
  const { load } = await import('js-yaml');
  let doc: Record<string, unknown> | undefined;
  try {
    doc = record(load(yamlText));
  } catch {
    return undefined;
  }
  const contextName = doc?.['current-context'];
  if (!doc || typeof contextName !== 'string' || !contextName) return undefined;
  const context = entry(doc, 'contexts', 'context', contextName);
  const cluster = context && entry(doc, 'clusters', 'cluster', context.cluster);
  const user = context && entry(doc, 'users', 'user', context.user);
  const server = text(cluster?.server);
  if (!cluster || !user || !server) return undefined;
  if (Object.keys(cluster).some((k) => !PLAIN_CLUSTER_KEYS.has(k))) return undefined;
  if (Object.keys(user).some((k) => !PLAIN_USER_KEYS.has(k))) return undefined;
  const local = (file: unknown): string | undefined => {
    const name = text(file);
    return name === undefined ? undefined : path.resolve(folder, name);
  };
  return new PlainKubeConnection(
    contextName,
    {
      server: server.replace(/\/$/, ''),
      caFile: local(cluster['certificate-authority']),
      caData: text(cluster['certificate-authority-data']),
      skipTLSVerify: cluster['insecure-skip-tls-verify'] === true,
      tlsServerName: text(cluster['tls-server-name']),
    },
    {
      token: text(user.token),
      certFile: local(user['client-certificate']),
      certData: text(user['client-certificate-data']),
      keyFile: local(user['client-key']),
      keyData: text(user['client-key-data']),
    },
  );
}

/**
 * The connection of a long-running process (the pod placement operator), found as loadKubeConfig finds it: `file`,
 * else the one path in $KUBECONFIG, else ~/.kube/config, else the pod's service account. When that kubeconfig holds
 * only a server, its CA, TLS options, a client certificate or a token (or is the service account's), the connection
 * is read here without loading @kubernetes/client-node: its generated API alone costs ~55 MiB of RSS that such a
 * process never uses. Anything else (exec plugins, auth providers, basic auth, impersonation, proxies, a $KUBECONFIG
 * list to merge, an invalid file) is loadKubeConfig's, with its errors (client-node reads the environment itself).
 */
export async function loadKubeConnection(
  file: string | undefined,
  options: {
    /** The process's environment ($KUBECONFIG, $HOME, the service address), passed by the command. */
    readonly env: NodeJS.ProcessEnv;
    /** The flag an error names. Default: --kubeconfig. */
    readonly flag?: string;
    /** Default: SERVICE_ACCOUNT_DIR. */
    readonly serviceAccountDir?: string;
  },
): Promise<KubeConnection> {
  const { env, flag = '--kubeconfig', serviceAccountDir = SERVICE_ACCOUNT_DIR } = options;
  const fromEnv = (env.KUBECONFIG ?? '').split(path.delimiter).filter(Boolean);
  const homeConfig = env.HOME ? path.join(env.HOME, '.kube', 'config') : undefined;
  const chosen =
    file ??
    (fromEnv.length > 1
      ? undefined
      : (fromEnv[0] ?? (homeConfig && existsSync(homeConfig) ? homeConfig : '')));
  let plain: KubeConnection | undefined;
  if (chosen) {
    let yamlText: string | undefined;
    try {
      yamlText = readFileSync(chosen, 'utf8');
    } catch {
      // unreadable: loadKubeConfig says so
    }
    if (yamlText !== undefined) plain = await plainConnectionOf(yamlText, path.dirname(chosen));
  } else if (chosen === '' && existsSync(path.join(serviceAccountDir, 'token'))) {
    plain = inClusterConnection(env, serviceAccountDir);
  }
  return plain ?? loadKubeConfig(file, flag);
}

/** client-node's loadFromCluster: the service's address from the environment, the mounted CA and token. */
function inClusterConnection(env: NodeJS.ProcessEnv, serviceAccountDir: string): KubeConnection {
  const host = env.KUBERNETES_SERVICE_HOST ?? '';
  const port = env.KUBERNETES_SERVICE_PORT ?? '';
  const scheme = ['80', '8080', '8001'].includes(port) ? 'http' : 'https';
  const serverHost = isIPv6(host) ? `[${host}]` : host;
  return new PlainKubeConnection(
    IN_CLUSTER_CONTEXT_NAME,
    {
      server: `${scheme}://${serverHost}:${port}`,
      caFile: path.join(serviceAccountDir, 'ca.crt'),
      skipTLSVerify: false,
    },
    { tokenFile: path.join(serviceAccountDir, 'token') },
  );
}
