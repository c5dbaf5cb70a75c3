// Descriptions of API resources (group/version/plural) and their REST paths. Add a constant for any resource
// you watch or write; nothing here talks to the server.
import { InvalidArgumentError } from './errors.js';

export interface ResourceType {
  /** API group, '' for the core group. */
  readonly group: string;
  readonly version: string;
  /** Lower-case plural used in URLs, e.g. `pods`. */
  readonly plural: string;
  readonly kind: string;
  readonly namespaced: boolean;
}

export function apiVersionOf(type: ResourceType): string {
  return type.group ? `${type.group}/${type.version}` : type.version;
}

/**
 * REST path of a collection (no name) or object, optionally a subresource such as `status`.
 * Throws when a namespaced resource is addressed by name without a namespace.
 */
export function resourcePath(
  type: ResourceType,
  namespace?: string,
  name?: string,
  subresource?: string,
): string {
  const base = type.group ? `/apis/${type.group}/${type.version}` : `/api/${type.version}`;
  let path = base;
  if (type.namespaced && namespace) path += `/namespaces/${encodeURIComponent(namespace)}`;
  else if (type.namespaced && name)
    throw new InvalidArgumentError('namespace', `${type.plural} ${name} is namespaced; give its namespace`);
  path += `/${type.plural}`;
  if (name) path += `/${encodeURIComponent(name)}`;
  if (subresource) path += `/${subresource}`;
  return path;
}

const core = (plural: string, kind: string, namespaced: boolean): ResourceType => ({
  group: '',
  version: 'v1',
  plural,
  kind,
  namespaced,
});

export const Pods = core('pods', 'Pod', true);
export const Nodes = core('nodes', 'Node', false);
export const Namespaces = core('namespaces', 'Namespace', false);
export const ConfigMaps = core('configmaps', 'ConfigMap', true);
export const Secrets = core('secrets', 'Secret', true);
export const CoreEvents = core('events', 'Event', true);
export const Services = core('services', 'Service', true);
export const EndpointSlices: ResourceType = {
  group: 'discovery.k8s.io',
  version: 'v1',
  plural: 'endpointslices',
  kind: 'EndpointSlice',
  namespaced: true,
};
export const Leases: ResourceType = {
  group: 'coordination.k8s.io',
  version: 'v1',
  plural: 'leases',
  kind: 'Lease',
  namespaced: true,
};
export const Events: ResourceType = {
  group: 'events.k8s.io',
  version: 'v1',
  plural: 'events',
  kind: 'Event',
  namespaced: true,
};
export const MutatingWebhookConfigurations: ResourceType = {
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  plural: 'mutatingwebhookconfigurations',
  kind: 'MutatingWebhookConfiguration',
  namespaced: false,
};
export const ValidatingWebhookConfigurations: ResourceType = {
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  plural: 'validatingwebhookconfigurations',
  kind: 'ValidatingWebhookConfiguration',
  namespaced: false,
};
export const CustomResourceDefinitions: ResourceType = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  plural: 'customresourcedefinitions',
  kind: 'CustomResourceDefinition',
  namespaced: false,
};
