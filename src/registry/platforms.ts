// Pure decisions on manifest documents: which platforms an index lists (attestations and `unknown` skipped,
// variants kept per platform but folded in the architecture set), the platform of a single image from its
// config blob, and whether an image is an OLM operator bundle (which runs nowhere, so it fits every node).
// Callers pass parsed JSON; malformed documents throw RegistryError('TESSERA_REGISTRY_BAD_RESPONSE').
import { RegistryError } from './errors.js';
import { isRecord } from '../runtime/light.js';

/** One runnable platform of an image. */
export interface ImagePlatform {
  readonly os: string;
  readonly architecture: string;
  /** CPU variant (`v8`, `v7`), when the registry lists one. */
  readonly variant: string | undefined;
  /** Digest of the platform's manifest (for a single-manifest image, the image digest itself). */
  readonly digest: string;
}

/** Architectures an operator bundle counts as: every architecture the cluster may run. */
export const allArchitectures: readonly string[] = ['amd64', 'arm64', 'ppc64le', 's390x'];

/** Config labels that mark an OLM bundle image (pod-placement.constants.json). */
export const bundleImageLabels: readonly string[] = [
  'operators.operatorframework.io.metrics.builder',
  'operators.operatorframework.io.bundle.mediatype.v1',
  'operators.operatorframework.io.bundle.manifests.v1',
  'operators.operatorframework.io.bundle.metadata.v1',
  'operators.operatorframework.io.bundle.package.v1',
  'operators.operatorframework.io.bundle.channels.v1',
  'operators.operatorframework.io.bundle.channel.default.v1',
];

/** Annotations BuildKit puts on attestation entries of an index; either one marks an attestation (as for MTO). */
export const attestationAnnotation = 'vnd.docker.reference.type';
export const attestationSubjectAnnotation = 'vnd.docker.reference.digest';

/** Most entries an index may list; a larger index is refused before any entry is read. */
export const defaultMaxIndexEntries = 1000;

// A Map, not an object literal: registry text must never be looked up as a plain-object key (`constructor`).
const architectureAliases: ReadonlyMap<string, string> = new Map([
  ['x86_64', 'amd64'],
  ['x86-64', 'amd64'],
  ['aarch64', 'arm64'],
]);

/** Longest architecture, os or variant name accepted from a registry. */
export const maxPlatformNameLength = 32;

/**
 * True for a plausible architecture, os or variant name (`amd64`, `linux`, `v8`, `ppc64le`): lowercase letters,
 * digits, `.`, `_`, `-`, at most 32 characters. Length first, then a pattern without nested quantifiers: linear.
 * Anything else from a registry (`__proto__`, `constructor`, control characters, huge strings) is not a platform.
 */
export function isValidPlatformName(name: string): boolean {
  return name.length <= maxPlatformNameLength && /^[a-z0-9][a-z0-9._-]*$/.test(name);
}

/** Lowercase GOARCH name; `arm64/v8` -> `arm64`, `aarch64` -> `arm64`, `x86_64` -> `amd64`. */
export function normalizeArchitecture(architecture: string): string {
  const base = architecture.toLowerCase().split('/')[0] ?? '';
  return architectureAliases.get(base) ?? base;
}

function stringField(value: Record<string, unknown>, key: string): string | undefined {
  const field = Object.hasOwn(value, key) ? value[key] : undefined;
  return typeof field === 'string' ? field : undefined;
}

function malformed(what: string, reason: string): RegistryError {
  return new RegistryError('TESSERA_REGISTRY_BAD_RESPONSE', `${what}: ${reason}`);
}

/** Why index entries were left out, counted (the keys are ours, never registry text). */
export interface SkippedEntries {
  /** Attestation manifests (`vnd.docker.reference.type` or `vnd.docker.reference.digest` annotation). */
  readonly attestation: number;
  /** Entries without a platform, or with architecture `unknown` or empty. */
  readonly unknown: number;
  /** Entries whose architecture, os, variant or digest is not valid syntax (see isValidPlatformName). */
  readonly invalid: number;
}

export interface IndexPlatforms {
  readonly platforms: ImagePlatform[];
  readonly skipped: SkippedEntries;
}

/** Digest grammar of the OCI image spec, checked before a registry-sent digest enters a URL or message. */
export const digestPattern = /^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]{1,256}$/;

/**
 * Platforms listed by an OCI index or Docker manifest list, in document order, without attestation entries,
 * entries whose architecture is `unknown` or missing, entries with no platform, and entries with invalid names
 * (each counted in `skipped`). `os: unknown` with a real architecture is kept (MTO keeps it). An index with more
 * than `maxEntries` entries is refused with TESSERA_REGISTRY_TOO_LARGE before any entry is read.
 */
export function readIndex(index: unknown, what: string, maxEntries = defaultMaxIndexEntries): IndexPlatforms {
  if (!isRecord(index) || !Array.isArray(index.manifests))
    throw malformed(what, 'the index has no "manifests" array');
  if (index.manifests.length > maxEntries) {
    throw new RegistryError(
      'TESSERA_REGISTRY_TOO_LARGE',
      `${what}: the index lists ${index.manifests.length} manifests, more than the ${maxEntries} allowed; refusing to read it`,
    );
  }
  const platforms: ImagePlatform[] = [];
  const skipped = { attestation: 0, unknown: 0, invalid: 0 };
  for (const entry of index.manifests as unknown[]) {
    if (!isRecord(entry)) throw malformed(what, 'an index entry is not an object');
    const digest = stringField(entry, 'digest');
    if (digest === undefined) throw malformed(what, 'an index entry has no digest');
    const annotations = entry.annotations;
    if (
      isRecord(annotations) &&
      (Object.hasOwn(annotations, attestationAnnotation) ||
        Object.hasOwn(annotations, attestationSubjectAnnotation))
    ) {
      skipped.attestation++;
      continue;
    }
    const platform = entry.platform;
    if (!isRecord(platform)) {
      skipped.unknown++;
      continue;
    }
    const rawArchitecture = stringField(platform, 'architecture') ?? '';
    // Long strings are invalid whatever they hold: do not even lowercase or split them.
    const architecture =
      rawArchitecture.length <= maxPlatformNameLength * 2
        ? normalizeArchitecture(rawArchitecture)
        : rawArchitecture;
    if (architecture === '' || architecture === 'unknown') {
      skipped.unknown++;
      continue;
    }
    const os = (stringField(platform, 'os') ?? '').slice(0, maxPlatformNameLength + 1).toLowerCase();
    const variant =
      (stringField(platform, 'variant') ?? '').slice(0, maxPlatformNameLength + 1).toLowerCase() || undefined;
    if (
      !isValidPlatformName(architecture) ||
      (os !== '' && !isValidPlatformName(os)) ||
      (variant !== undefined && !isValidPlatformName(variant)) ||
      !digestPattern.test(digest)
    ) {
      skipped.invalid++;
      continue;
    }
    platforms.push({ os, architecture, variant, digest });
  }
  return { platforms, skipped };
}

/** Digest and size of the config blob a single manifest points at. */
export function configDescriptorOf(manifest: unknown, what: string): { digest: string; size: number } {
  if (!isRecord(manifest) || !isRecord(manifest.config))
    throw malformed(what, 'the manifest has no "config" descriptor');
  const digest = stringField(manifest.config, 'digest');
  const size = Object.hasOwn(manifest.config, 'size') ? manifest.config.size : undefined;
  if (digest === undefined || typeof size !== 'number')
    throw malformed(what, 'the config descriptor lacks digest or size');
  return { digest, size };
}

/** What an image config blob says about where the image runs. */
export interface ConfigFacts {
  readonly os: string;
  readonly architecture: string;
  readonly variant: string | undefined;
  /** True when the config carries any OLM bundle label. */
  readonly operatorBundle: boolean;
}

/**
 * Reads `architecture`, `os`, `variant` and the labels of an image config blob. An architecture or os that is
 * not valid syntax (isValidPlatformName) is refused with TESSERA_REGISTRY_BAD_RESPONSE (it is the image's only
 * platform, so dropping it would silently mean "runs nowhere"); an invalid variant is dropped.
 */
export function factsOfConfig(config: unknown, what: string): ConfigFacts {
  if (!isRecord(config)) throw malformed(what, 'the image config is not a JSON object');
  const rawArchitecture = stringField(config, 'architecture') ?? '';
  const architecture =
    rawArchitecture.length <= maxPlatformNameLength * 2
      ? normalizeArchitecture(rawArchitecture)
      : rawArchitecture;
  const os = (stringField(config, 'os') ?? '').slice(0, maxPlatformNameLength + 1).toLowerCase();
  if (
    (architecture !== '' && !isValidPlatformName(architecture)) ||
    (os !== '' && !isValidPlatformName(os))
  ) {
    throw malformed(
      what,
      'the image config names an invalid architecture or os (expected a short lowercase name such as amd64 or linux); rebuild or re-push the image',
    );
  }
  const variant = stringField(config, 'variant') || undefined;
  const inner = Object.hasOwn(config, 'config') ? config.config : undefined;
  const labels =
    isRecord(inner) && Object.hasOwn(inner, 'Labels') && isRecord(inner.Labels) ? inner.Labels : {};
  return {
    os,
    architecture,
    variant: variant !== undefined && isValidPlatformName(variant) ? variant : undefined,
    operatorBundle: bundleImageLabels.some((label) => Object.hasOwn(labels, label)),
  };
}

/** Sorted, de-duplicated architectures of `platforms` (variants folded). */
export function architecturesOf(platforms: readonly ImagePlatform[]): string[] {
  return [...new Set(platforms.map((p) => p.architecture))].sort();
}

/**
 * The index entry to read to tell whether an index is an operator bundle, or undefined when it is not probed. MTO
 * reads the first runnable entry of every index (three or four requests per image instead of one or two). Tessera
 * reads it for an index of one platform (a bundle is built FROM scratch for one platform, so that is how a bundle
 * usually looks), and for an index of several platforms only when `probeMultiPlatform` (the images of OLM's
 * bundle-unpack pods, which multi-architecture pipelines publish as indexes): ordinary multi-architecture images
 * cost no extra request.
 */
export function bundleProbeTarget(
  platforms: readonly ImagePlatform[],
  probeMultiPlatform: boolean,
): ImagePlatform | undefined {
  if (platforms.length === 1 || (probeMultiPlatform && platforms.length > 1)) return platforms[0];
  return undefined;
}
