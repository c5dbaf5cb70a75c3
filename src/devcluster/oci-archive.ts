// Small images made of local files, for real nodes: the sandbox (pause) image a node's containerd imports, and
// test images whose one layer holds a static binary. Pure: builds bytes (a POSIX ustar writer for a handful of
// regular files, the image's config and manifest, and an OCI image layout archive `ctr images import` reads).
import { blobOf, type Blob, type BuiltImage } from './registry-images.js';

export interface ArchiveFile {
  /** Path inside the archive, relative, at most 100 bytes; ending in `/`, a directory (its `bytes` empty). */
  readonly path: string;
  readonly bytes: Buffer;
  /** Default: 0o644. */
  readonly mode?: number;
}

const BLOCK = 512;

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

function header(file: ArchiveFile): Buffer {
  const name = Buffer.from(file.path, 'utf8');
  if (name.length === 0 || name.length > 100) {
    throw new RangeError(`archive path "${file.path}" must be 1-100 bytes`);
  }
  const directory = file.path.endsWith('/');
  if (directory && file.bytes.length > 0) throw new RangeError(`directory "${file.path}" cannot have bytes`);
  const h = Buffer.alloc(BLOCK);
  name.copy(h, 0);
  h.write(octal(file.mode ?? 0o644, 8), 100, 'ascii');
  h.write(octal(0, 8), 108, 'ascii'); // uid
  h.write(octal(0, 8), 116, 'ascii'); // gid
  h.write(octal(file.bytes.length, 12), 124, 'ascii');
  h.write(octal(0, 12), 136, 'ascii'); // mtime: reproducible
  h.write('        ', 148, 'ascii'); // checksum placeholder (spaces while summing)
  h.write(directory ? '5' : '0', 156, 'ascii'); // directory or regular file
  h.write('ustar\0', 257, 'ascii');
  h.write('00', 263, 'ascii');
  let sum = 0;
  for (const byte of h) sum += byte;
  h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 'ascii');
  return h;
}

/** A ustar archive of regular files and directories (owner root, mtime 0), in the order given. */
export function tarOf(files: readonly ArchiveFile[]): Buffer {
  const parts: Buffer[] = [];
  for (const file of files) {
    parts.push(header(file), file.bytes);
    const pad = (BLOCK - (file.bytes.length % BLOCK)) % BLOCK;
    if (pad > 0) parts.push(Buffer.alloc(pad));
  }
  parts.push(Buffer.alloc(2 * BLOCK));
  return Buffer.concat(parts);
}

const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
const OCI_CONFIG = 'application/vnd.oci.image.config.v1+json';
const OCI_LAYER = 'application/vnd.oci.image.layer.v1.tar';
const OCI_INDEX = 'application/vnd.oci.image.index.v1+json';

const descriptor = (b: Blob): { mediaType: string; digest: string; size: number } => ({
  mediaType: b.mediaType,
  digest: b.digest,
  size: b.size,
});

/** A one-layer (uncompressed) OCI image of `files` that runs `entrypoint` as `user`. */
export function filesImage(options: {
  readonly architecture: string;
  readonly files: readonly ArchiveFile[];
  readonly entrypoint: readonly string[];
  /** Default: 65532 (nonroot). */
  readonly user?: string;
  /** `NAME=value` entries of the image's environment. */
  readonly env?: readonly string[];
  readonly labels?: Readonly<Record<string, string>>;
}): BuiltImage {
  const layer = blobOf(OCI_LAYER, tarOf(options.files));
  const config = blobOf(
    OCI_CONFIG,
    Buffer.from(
      JSON.stringify({
        architecture: options.architecture,
        os: 'linux',
        config: {
          Entrypoint: options.entrypoint,
          User: options.user ?? '65532',
          ...(options.env ? { Env: options.env } : {}),
          ...(options.labels ? { Labels: options.labels } : {}),
        },
        rootfs: { type: 'layers', diff_ids: [layer.digest] },
      }),
    ),
  );
  const manifest = blobOf(
    OCI_MANIFEST,
    Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: OCI_MANIFEST,
        config: descriptor(config),
        layers: [descriptor(layer)],
      }),
    ),
  );
  return { manifest, blobs: [config, layer], children: [] };
}

/** An OCI image layout archive of a single-manifest image, named `name` for `ctr images import`. */
export function ociLayoutArchive(image: BuiltImage, name: string): Buffer {
  const tag = name.slice(name.lastIndexOf(':') + 1);
  const index = {
    schemaVersion: 2,
    mediaType: OCI_INDEX,
    manifests: [
      {
        ...descriptor(image.manifest),
        annotations: { 'io.containerd.image.name': name, 'org.opencontainers.image.ref.name': tag },
      },
    ],
  };
  const blobs = [image.manifest, ...image.blobs].map((b) => ({
    path: `blobs/sha256/${b.digest.slice('sha256:'.length)}`,
    bytes: b.bytes,
  }));
  return tarOf([
    { path: 'oci-layout', bytes: Buffer.from(JSON.stringify({ imageLayoutVersion: '1.0.0' })) },
    { path: 'index.json', bytes: Buffer.from(JSON.stringify(index)) },
    ...blobs,
  ]);
}
