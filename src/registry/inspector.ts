// The one interface every inspection layer implements and the pod-placement controller consumes:
// `inspect(image, options)` -> the platforms an image runs on. Layers (registry access, caching) decorate it.
// Implementations must not log or expose credentials, and must reject with RegistryError (stable `code`).
import type { Keyring } from './keyring.js';
import type { ImagePlatform, SkippedEntries } from './platforms.js';
import type { ShortNameChoice } from './short-names.js';

export interface InspectOptions {
  /** Credentials the kubelet would use for this pod. Default: anonymous. */
  readonly keyring?: Keyring;
  /** Cancels the caller's wait (a shared registry request continues for other callers). */
  readonly signal?: AbortSignal;
  /** Neither read nor write caches (the pod's imagePullPolicy is Always). Default: false. */
  readonly bypassCache?: boolean;
  /**
   * Inspections passing the same object share one per-caller concurrency cap (RegistryInspector's
   * `maxConcurrentInspectionsPerCaller`). Default: the `keyring` object, which the pod reconciler builds once per
   * pod, so one pod with many images cannot take every registry slot.
   */
  readonly concurrencyGroup?: object;
  /**
   * Also probe an index of several platforms for an operator bundle (its first runnable manifest and that one's
   * config: two requests, remembered per manifest digest), as MTO does for every index. For the images of OLM's
   * bundle-unpack pods, the only pods that run bundles; an index of one platform is probed either way.
   * Default: false.
   */
  readonly probeOperatorBundle?: boolean;
}

export interface ImageInspection {
  /**
   * Normalised reference that was asked for (`docker.io/library/nginx:latest`); for a short name, the candidate
   * chosen (see `shortName`).
   */
  readonly reference: string;
  /** Digest of the top-level manifest (index or single manifest). */
  readonly digest: string;
  readonly mediaType: string;
  /** `index` for OCI indexes / Docker manifest lists, `manifest` for single-platform images. */
  readonly kind: 'index' | 'manifest';
  /** Sorted architectures the image runs on (variants folded; all architectures for operator bundles). */
  readonly architectures: readonly string[];
  /** Runnable platforms as listed (attestations and `unknown` skipped). */
  readonly platforms: readonly ImagePlatform[];
  /** The image is an OLM operator bundle (never runs, so it fits every node). */
  readonly operatorBundle: boolean;
  /** For an index: entries left out of `platforms`, counted by reason (attestation, unknown, invalid). */
  readonly skippedEntries?: SkippedEntries;
  /** `registry/repository` that answered (a mirror's when one was used). */
  readonly source: string;
  /** For a short name (no registry): how `reference` was chosen among the candidates (short-names.ts). */
  readonly shortName?: ShortNameChoice;
}

export interface ImageInspector {
  /** Inspects `image` (any reference a pod may carry). Rejects with RegistryError. */
  inspect(image: string, options?: InspectOptions): Promise<ImageInspection>;
  /**
   * Whether inspect() with `keyring` would be answered from a cache, without a registry request. Optional: an
   * inspector without a cache leaves it out (every inspection goes to the registry).
   */
  isCached?(image: string, keyring: Keyring, options?: Pick<InspectOptions, 'probeOperatorBundle'>): boolean;
}
