// Pure decisions on manifest documents: which platforms an index lists (attestations and `unknown` skipped,
// variants kept per platform but folded in the architecture set), the platform of a single image from its
// config blob, and whether an image is an OLM operator bundle (which runs nowhere, so it fits every node).
// Callers pass parsed JSON; malformed documents throw RegistryError('TESSERA_REGISTRY_BAD_RESPONSE').
import { RegistryError } from './errors.js';

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

/** Annotation BuildKit puts on attestation entries of an index. */
export const attestationAnnotation = 'vnd.docker.reference.type';

const architectureAliases: Readonly<Record<string, string>> = {
  x86_64: 'amd64',
  'x86-64': 'amd64',
  aarch64: 'arm64',
};

/** Lowercase GOARCH name; `arm64/v8` -> `arm64`, `aarch64` -> `arm64`, `x86_64` -> `amd64`. */
export function normalizeArchitecture(architecture: string): string {
  const base = architecture.toLowerCase().split('/')[0] ?? '';
  return architectureAliases[base] ?? base;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stringField(value: Record<string, unknown>, key: string): string | undefined {
  const field = value[key];
  return typeof field === 'string' ? field : undefined;
}

function malformed(what: string, reason: string): RegistryError {
  return new RegistryError('TESSERA_REGISTRY_BAD_RESPONSE', `${what}: ${reason}`);
}

/**
 * Platforms listed by an OCI index or Docker manifest list, in document order, without attestation entries,
 * entries whose architecture or os is `unknown`, and entries with no platform. `what` names the image in errors.
 */
export function platformsOfIndex(index: unknown, what: string): ImagePlatform[] {
  if (!isRecord(index) || !Array.isArray(index.manifests))
    throw malformed(what, 'the index has no "manifests" array');
  const platforms: ImagePlatform[] = [];
  for (const entry of index.manifests) {
    if (!isRecord(entry)) throw malformed(what, 'an index entry is not an object');
    const digest = stringField(entry, 'digest');
    if (digest === undefined) throw malformed(what, 'an index entry has no digest');
    const annotations = entry.annotations;
    if (isRecord(annotations) && annotations[attestationAnnotation] !== undefined) continue;
    const platform = entry.platform;
    if (!isRecord(platform)) continue;
    const architecture = normalizeArchitecture(stringField(platform, 'architecture') ?? '');
    const os = stringField(platform, 'os') ?? '';
    if (architecture === '' || architecture === 'unknown' || os === 'unknown') continue;
    platforms.push({ os, architecture, variant: stringField(platform, 'variant') || undefined, digest });
  }
  return platforms;
}

/** Digest and size of the config blob a single manifest points at. */
export function configDescriptorOf(manifest: unknown, what: string): { digest: string; size: number } {
  if (!isRecord(manifest) || !isRecord(manifest.config))
    throw malformed(what, 'the manifest has no "config" descriptor');
  const digest = stringField(manifest.config, 'digest');
  const size = manifest.config.size;
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

/** Reads `architecture`, `os`, `variant` and the labels of an image config blob. */
export function factsOfConfig(config: unknown, what: string): ConfigFacts {
  if (!isRecord(config)) throw malformed(what, 'the image config is not a JSON object');
  const architecture = normalizeArchitecture(stringField(config, 'architecture') ?? '');
  const inner = config.config;
  const labels = isRecord(inner) && isRecord(inner.Labels) ? inner.Labels : {};
  return {
    os: stringField(config, 'os') ?? '',
    architecture,
    variant: stringField(config, 'variant') || undefined,
    operatorBundle: bundleImageLabels.some((label) => label in labels),
  };
}

/** Sorted, de-duplicated architectures of `platforms` (variants folded). */
export function architecturesOf(platforms: readonly ImagePlatform[]): string[] {
  return [...new Set(platforms.map((p) => p.architecture))].sort();
}
