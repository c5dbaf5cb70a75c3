// Public surface of image inspection. Consumers (pod placement, CLI) import from here only.
// Typical wiring: new CachingInspector(new RegistryInspector({ policy, caCertificates }), { metrics }) and, per
// pod, Keyring.of(entriesOfPullSecret(podSecret...), entriesOfPullSecret(globalSecret)).
export type { ImageInspection, ImageInspector, InspectOptions } from './inspector.js';
export { RegistryInspector, type RegistryInspectorOptions } from './registry-inspector.js';
export {
  CachingInspector,
  type CachingInspectorOptions,
  type InspectionCacheMetrics,
} from './caching-inspector.js';
export {
  DistributionClient,
  type DistributionClientOptions,
  type RepositoryLocation,
} from './distribution-client.js';
export {
  DEFAULT_MAX_KEYRING_LOOKUP_STEPS,
  Keyring,
  keyMatchesImage,
  maxKeyringKeyLength,
  normalizeKeyringKey,
  SecretKeys,
  type KeyringMatch,
  type KeyringOptions,
} from './keyring.js';
export {
  dockerCfgKey,
  dockerCfgSecretType,
  dockerConfigJsonKey,
  dockerConfigJsonSecretType,
  entriesOfPullSecret,
  parseDockerCfg,
  parseDockerConfigJson,
  pullSecretBudget,
  type DockerConfigEntry,
  type PullSecretLike,
  type RegistryCredential,
} from './docker-config.js';
export {
  emptyRegistryPolicy,
  pullSources,
  registryPolicyFrom,
  type MirrorRule,
  type PullSource,
  type RegistryPolicy,
} from './mirrors.js';
export {
  allArchitectures,
  bundleImageLabels,
  defaultMaxIndexEntries,
  isValidPlatformName,
  type ImagePlatform,
  type SkippedEntries,
} from './platforms.js';
export {
  acceptAnythingPolicy,
  admissionVerdict,
  describeSignatureRequirement,
  PolicyRefusalError,
  type AdmissionRequirement,
  type AdmissionScope,
  type AdmissionVerdict,
  type ImageAdmissionPolicy,
} from './image-admission.js';
export { sameCaCertificates, type UnreachableEvent } from './transport.js';
export { registryHostKey, sameHostCaCertificates, type HostCaCertificates } from './registry-cas.js';
export {
  AddressPolicy,
  loopbackRanges,
  type AddressPolicyOptions,
  type AddressVerdict,
} from './address-policy.js';
export { formatReference, parseImageReference, type ImageReference } from './reference.js';
export {
  describeShortNameChoice,
  isShortName,
  resolveShortName,
  type ShortNameChoice,
  type ShortNameResolution,
  type ShortNameRule,
} from './short-names.js';
export { isAbort, ProxyError, RegistryError, type RegistryErrorCode } from './errors.js';
export {
  NoProxy,
  proxyConfigFromEnvironment,
  proxyFor,
  type ProxyConfig,
  type ProxyEndpoint,
  type ProxyEnvironment,
} from './proxy-config.js';
export { readTrustedCaBundle } from './proxy-trust.js';
export { classifyRegistryFailure, type RegistryFailureClass } from './failure-class.js';
export { KeyedConcurrencyLimit } from './concurrency-limit.js';
export {
  addressClass,
  defaultRedirectVerdict,
  type AddressClass,
  type RedirectCandidate,
  type RedirectPolicy,
  type RedirectVerdict,
} from './redirect-policy.js';
// Loads prom-client: the CLI imports the modules it needs directly instead of this index.
export { createInspectionCacheMetrics } from './metrics.js';
