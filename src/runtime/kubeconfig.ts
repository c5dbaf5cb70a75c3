// The one way a command loads the kubeconfig its --kubeconfig flag names, and applies oc's global connection flags
// over it. @kubernetes/client-node is imported on the first call, not with the runtime: importing it costs most of a
// second, which a command that never talks to a cluster must not pay.
import { readFileSync } from 'node:fs';
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
