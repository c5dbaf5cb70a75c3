// Builds small, valid test images in memory (config blob, one layer, manifest; indexes over them) in OCI or
// Docker v2 form, for pushing to a local registry. Deterministic for equal inputs except the layer's `salt`.
// Pure: returns bytes and digests; LocalRegistry.push* uploads them.
import { createHash } from 'node:crypto';

export type ImageFormat = 'oci' | 'docker';

export interface Blob {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
  readonly bytes: Buffer;
}

export interface BuiltImage {
  /** The manifest itself, as a blob (its digest is the image digest). */
  readonly manifest: Blob;
  /** Blobs the manifest references (config and layers), to upload first. */
  readonly blobs: readonly Blob[];
  /** Child images an index references, to upload first (empty for a single manifest). */
  readonly children: readonly BuiltImage[];
}

export interface PlatformSpec {
  readonly architecture: string;
  /** Default: linux. */
  readonly os?: string;
  readonly variant?: string;
}

const types = {
  oci: {
    index: 'application/vnd.oci.image.index.v1+json',
    manifest: 'application/vnd.oci.image.manifest.v1+json',
    config: 'application/vnd.oci.image.config.v1+json',
    layer: 'application/vnd.oci.image.layer.v1.tar+gzip',
  },
  docker: {
    index: 'application/vnd.docker.distribution.manifest.list.v2+json',
    manifest: 'application/vnd.docker.distribution.manifest.v2+json',
    config: 'application/vnd.docker.container.image.v1+json',
    layer: 'application/vnd.docker.image.rootfs.diff.tar.gzip',
  },
} as const;

export function blobOf(mediaType: string, bytes: Buffer): Blob {
  return {
    mediaType,
    bytes,
    size: bytes.length,
    digest: `sha256:${createHash('sha256').update(bytes).digest('hex')}`,
  };
}

function jsonBlob(mediaType: string, doc: unknown): Blob {
  return blobOf(mediaType, Buffer.from(JSON.stringify(doc)));
}

const descriptor = (b: Blob): { mediaType: string; digest: string; size: number } => ({
  mediaType: b.mediaType,
  digest: b.digest,
  size: b.size,
});

/** A single-platform image whose config says `platform`, with optional config labels. */
export function singleImage(options: {
  readonly platform: PlatformSpec;
  readonly format?: ImageFormat;
  readonly labels?: Readonly<Record<string, string>>;
  /** Makes the layer (and so the image) unique. Default: the platform. */
  readonly salt?: string;
  /** Pads the config with this many bytes of history (to test size limits). Default: 0. */
  readonly configPadding?: number;
}): BuiltImage {
  const t = types[options.format ?? 'oci'];
  const { architecture, os = 'linux', variant } = options.platform;
  const layer = blobOf(
    t.layer,
    Buffer.from(`layer ${options.salt ?? `${os}/${architecture}/${variant ?? ''}`}`),
  );
  const config = jsonBlob(t.config, {
    architecture,
    os,
    ...(variant ? { variant } : {}),
    config: { Labels: options.labels ?? {} },
    rootfs: { type: 'layers', diff_ids: [layer.digest] },
    history: options.configPadding ? [{ comment: 'x'.repeat(options.configPadding) }] : [],
  });
  const manifest = jsonBlob(t.manifest, {
    schemaVersion: 2,
    mediaType: t.manifest,
    config: descriptor(config),
    layers: [descriptor(layer)],
  });
  return { manifest, blobs: [config, layer], children: [] };
}

/** An index (OCI) or manifest list (Docker) over one image per platform, plus optional attestation entries. */
export function multiPlatformImage(options: {
  readonly platforms: readonly PlatformSpec[];
  readonly format?: ImageFormat;
  /** Add a BuildKit-style attestation manifest (platform unknown/unknown) per this many first platforms. Default: 0. */
  readonly attestations?: number;
  readonly salt?: string;
}): BuiltImage {
  const format = options.format ?? 'oci';
  const t = types[format];
  const children = options.platforms.map((platform) =>
    singleImage({
      platform,
      format,
      salt: `${options.salt ?? ''}${platform.os ?? 'linux'}/${platform.architecture}/${platform.variant ?? ''}`,
    }),
  );
  const entries: unknown[] = children.map((child, i) => {
    const p = options.platforms[i] ?? { architecture: 'unknown' };
    return {
      ...descriptor(child.manifest),
      platform: {
        architecture: p.architecture,
        os: p.os ?? 'linux',
        ...(p.variant ? { variant: p.variant } : {}),
      },
    };
  });
  const attestations: BuiltImage[] = [];
  for (let i = 0; i < (options.attestations ?? 0); i++) {
    const target = children[i];
    if (target === undefined) break;
    const attestation = singleImage({
      platform: { architecture: 'unknown', os: 'unknown' },
      format: 'oci',
      salt: `attestation ${i} ${options.salt ?? ''}`,
    });
    attestations.push(attestation);
    entries.push({
      ...descriptor(attestation.manifest),
      platform: { architecture: 'unknown', os: 'unknown' },
      annotations: {
        'vnd.docker.reference.digest': target.manifest.digest,
        'vnd.docker.reference.type': 'attestation-manifest',
      },
    });
  }
  const manifest = jsonBlob(t.index, { schemaVersion: 2, mediaType: t.index, manifests: entries });
  return { manifest, blobs: [], children: [...children, ...attestations] };
}
