// Whether a failed inspection can succeed if asked again: `permanent` failures (the image or tag does not exist,
// the credentials are refused, the reference is malformed, the manifest type is unsupported, a policy or trust
// setting refuses the registry) will give the same answer until someone changes the pod, the registry or the
// configuration, so callers stop at once; `transient` ones (timeouts, 429, 5xx, connection failures, a cancelled
// wait, anything unknown) may heal, so callers retry with bounded backoff. Pure: decides from the stable `code`
// and the `retryable` flag set where the error was made, never from the message.
import { RegistryError, type RegistryErrorCode } from './errors.js';

export type RegistryFailureClass = 'permanent' | 'transient';

/** Codes whose answer cannot change by asking again. */
const permanentCodes: ReadonlySet<RegistryErrorCode> = new Set<RegistryErrorCode>([
  'TESSERA_REGISTRY_INVALID_REFERENCE',
  'TESSERA_REGISTRY_INVALID_PULL_SECRET',
  'TESSERA_REGISTRY_UNAUTHORIZED',
  'TESSERA_REGISTRY_NOT_FOUND',
  'TESSERA_REGISTRY_UNSUPPORTED_MANIFEST',
  'TESSERA_REGISTRY_DIGEST_MISMATCH',
  'TESSERA_REGISTRY_TOO_LARGE',
  'TESSERA_REGISTRY_TOO_MANY_REDIRECTS',
  'TESSERA_REGISTRY_REDIRECT_REFUSED',
  'TESSERA_REGISTRY_UNTRUSTED_REALM',
  'TESSERA_REGISTRY_BLOCKED',
]);

/** Codes that say nothing lasting about the image: the answer did not come (in time). */
const transientCodes: ReadonlySet<RegistryErrorCode> = new Set<RegistryErrorCode>([
  'TESSERA_REGISTRY_TIMEOUT',
  'TESSERA_REGISTRY_ABORTED',
]);

/**
 * Classifies a failed inspection. A failure over several pull sources (mirrors) is transient when any source
 * failed transiently (`retryable`), since that source may still answer. UNAVAILABLE and BAD_RESPONSE follow
 * `retryable`: 429/5xx and broken connections are transient, an untrusted certificate or a TLS protocol
 * mismatch or an unexpected 4xx is permanent. Errors that are not RegistryErrors are transient (unknown).
 */
export function classifyRegistryFailure(err: unknown): RegistryFailureClass {
  if (!(err instanceof RegistryError)) return 'transient';
  if (err.retryable || transientCodes.has(err.code)) return 'transient';
  if (permanentCodes.has(err.code)) return 'permanent';
  return 'permanent'; // UNAVAILABLE / BAD_RESPONSE that their maker marked as not retryable
}
