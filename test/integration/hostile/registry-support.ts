// Shared pieces of the hostile-registry tests: a handler that serves images (tags, manifests by digest, blobs)
// from a loopback fake server, an index builder that writes whatever entries a hostile registry would, and a
// server-side gauge of requests in flight (to prove concurrency caps without timing anything).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { blobOf, type Blob, type BuiltImage } from '../../../src/devcluster/registry-images.js';

export const ociIndexType = 'application/vnd.oci.image.index.v1+json';

/** Every manifest and blob of `image`, by digest. */
function collect(image: BuiltImage, manifests: Map<string, Blob>, blobs: Map<string, Blob>): void {
  manifests.set(image.manifest.digest, image.manifest);
  for (const b of image.blobs) blobs.set(b.digest, b);
  for (const c of image.children) collect(c, manifests, blobs);
}

/**
 * A request handler serving `tags` (tag -> image, any repository) and everything they reference. Unknown paths
 * answer 404 with a distribution error body.
 */
export function serveImages(
  tags: Readonly<Record<string, BuiltImage>>,
): (req: IncomingMessage, res: ServerResponse) => void {
  const manifests = new Map<string, Blob>();
  const blobs = new Map<string, Blob>();
  const tagged = new Map<string, Blob>();
  for (const [tag, image] of Object.entries(tags)) {
    collect(image, manifests, blobs);
    tagged.set(tag, image.manifest);
  }
  return (req, res) => {
    const m = /^\/v2\/.+\/(manifests|blobs)\/([^/?]+)$/.exec(req.url ?? '');
    const ref = m?.[2] ?? '';
    const found = m?.[1] === 'blobs' ? blobs.get(ref) : (manifests.get(ref) ?? tagged.get(ref));
    if (found === undefined) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ errors: [{ code: 'MANIFEST_UNKNOWN', message: 'unknown' }] }));
      return;
    }
    res.writeHead(200, { 'content-type': found.mediaType, 'docker-content-digest': found.digest });
    res.end(found.bytes);
  };
}

/** An OCI index with exactly these entries (no children pushed): what a hostile registry may send. */
export function rawIndex(entries: readonly unknown[]): BuiltImage {
  const manifest = blobOf(
    ociIndexType,
    Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: ociIndexType, manifests: entries })),
  );
  return { manifest, blobs: [], children: [] };
}

/** Wraps a handler to count requests in flight; `max` is the most seen at once. */
export function inFlightGauge(handler: (req: IncomingMessage, res: ServerResponse) => void): {
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  readonly max: () => number;
} {
  let now = 0;
  let max = 0;
  return {
    handler: (req, res) => {
      now++;
      max = Math.max(max, now);
      res.on('close', () => now--);
      // Answer on a later turn so concurrent requests overlap on the server.
      setTimeout(() => handler(req, res), 5);
    },
    max: () => max,
  };
}
