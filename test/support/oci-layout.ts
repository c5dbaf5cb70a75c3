// An image built in memory (src/devcluster/oci-archive.ts) written as an OCI image layout directory, which
// `crane push DIR REF` reads.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { filesImage } from '../../src/devcluster/oci-archive.js';

/** Writes a single-manifest image as an OCI image layout in `dir` (created). */
export function writeOciLayout(dir: string, image: ReturnType<typeof filesImage>): void {
  mkdirSync(path.join(dir, 'blobs', 'sha256'), { recursive: true });
  for (const blob of [image.manifest, ...image.blobs]) {
    writeFileSync(path.join(dir, 'blobs', 'sha256', blob.digest.slice('sha256:'.length)), blob.bytes);
  }
  writeFileSync(path.join(dir, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  writeFileSync(
    path.join(dir, 'index.json'),
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.index.v1+json',
      manifests: [
        { mediaType: image.manifest.mediaType, digest: image.manifest.digest, size: image.manifest.size },
      ],
    }),
  );
}
