// `tessera console-plugin register`: makes the ConsolePlugin exist where a bundle cannot put it. OLM v0 creates no
// ConsolePlugin from a bundle, yet the CSV's `console.openshift.io/plugins` annotation (OperatorHub's "enable the
// console plugin" choice) only works if one does; so the plugin pods' init container applies it, as the one
// object it may write. On a cluster without the OpenShift console the API is not served and there is nothing to do.
import {
  ApiStatusError,
  KubeClient,
  ResourceClient,
  isNotFound,
  type KubeConnection,
  type KubeObject,
  type ResourceType,
} from '../../runtime/index.js';
import { ConsolePluginRegistrationError } from '../errors.js';
import { REGISTRATION_FIELD_MANAGER, REGISTRATION_ROLE, consolePluginObject } from './manifests.js';

export const ConsolePlugins: ResourceType = {
  group: 'console.openshift.io',
  version: 'v1',
  plural: 'consoleplugins',
  kind: 'ConsolePlugin',
  namespaced: false,
};

export type RegistrationResult =
  | { readonly outcome: 'applied'; readonly name: string; readonly service: string }
  | { readonly outcome: 'api-not-served' };

/** Whether the API server serves console.openshift.io/v1 consoleplugins (the OpenShift console's API). */
async function consolePluginsServed(client: KubeClient, signal?: AbortSignal): Promise<boolean> {
  // Discovery of console.openshift.io/v1 (any authenticated user may read it; a 404 means no console API).
  try {
    const list = await client.request<{ resources?: { name?: string }[] }>({
      method: 'GET',
      path: `/apis/${ConsolePlugins.group}/${ConsolePlugins.version}`,
      signal,
    });
    return (list.resources ?? []).some((r) => r.name === ConsolePlugins.plural);
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

/**
 * Applies the ConsolePlugin for the plugin's Service in `namespace` (server-side apply, taking over its fields), or
 * reports that the cluster has no console API. An API refusal becomes a ConsolePluginRegistrationError that names the
 * grant; transport errors are thrown as they are (the kubelet restarts the init container).
 */
export async function registerConsolePlugin(
  client: KubeClient,
  namespace: string,
  signal?: AbortSignal,
): Promise<RegistrationResult> {
  const plugin = consolePluginObject(namespace);
  try {
    if (!(await consolePluginsServed(client, signal))) return { outcome: 'api-not-served' };
    await new ResourceClient<KubeObject>(client, ConsolePlugins).apply(plugin as unknown as KubeObject, {
      fieldManager: REGISTRATION_FIELD_MANAGER,
      force: true,
      signal,
    });
  } catch (err) {
    if (err instanceof ApiStatusError)
      throw new ConsolePluginRegistrationError(plugin.metadata.name, REGISTRATION_ROLE, err);
    throw err;
  }
  return { outcome: 'applied', name: plugin.metadata.name, service: `${namespace}/${plugin.metadata.name}` };
}

export interface RegisterCommandOptions {
  readonly connection: KubeConnection;
  readonly namespace: string;
  readonly out: (line: string) => void;
  readonly signal?: AbortSignal;
}

export async function runRegisterCommand(opts: RegisterCommandOptions): Promise<void> {
  const client = new KubeClient(opts.connection, { userAgent: 'tessera-console-plugin-register' });
  const result = await registerConsolePlugin(client, opts.namespace, opts.signal);
  if (result.outcome === 'api-not-served')
    opts.out(
      'this cluster does not serve console.openshift.io/v1 ConsolePlugins (no OpenShift console): nothing to register',
    );
  else
    opts.out(
      `ConsolePlugin ${result.name} applied: the console loads the plugin from Service ${result.service}`,
    );
}
