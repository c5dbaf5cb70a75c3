// Issue #20 item 1: registry documents whose bytes are within their limits but whose JSON shape would make the
// parser build hundreds of MiB (an 8 MiB config blob of millions of nested arrays behind a correct manifest; four
// 4 MiB manifests of a million tiny arrays each, held while their config blobs download; a token answer nested
// 500,000 deep). The pod placement controller's real reconcile path runs in a child process with the controller
// Deployment's heap flags against a loopback HTTPS registry: it must stay up, release the pod at once (the
// refusal is permanent: the registry would send the same bytes again) and name the document and the budget in
// the pod's annotation and Warning event.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blobOf, singleImage, type Blob, type BuiltImage } from '../../../src/devcluster/registry-images.js';
import { ANNOTATIONS, EVENT_REASONS } from '../../../src/podplacement/constants.js';
import type { PodMergePatch } from '../../../src/podplacement/placement-plan.js';
import { defaultRegistryJsonBudgets } from '../../../src/registry/registry-json.js';
import { startFakeServer, type FakeServer } from '../../integration/registry/fake-server.js';
import { controllerHeapFlags, runChild, type ChildOutcome } from './child-process.js';

const ociManifestType = 'application/vnd.oci.image.manifest.v1+json';
const ociConfigType = 'application/vnd.oci.image.config.v1+json';
const MiB = 1024 * 1024;

/** A single-platform manifest whose digest and size are right, pointing at `config`, with `extra` fields. */
function manifestOver(config: Blob, extra: string = ''): Blob {
  const descriptor = JSON.stringify({ mediaType: ociConfigType, digest: config.digest, size: config.size });
  const text = `{"schemaVersion":2,"mediaType":"${ociManifestType}","config":${descriptor},"layers":[]${extra}}`;
  return blobOf(ociManifestType, Buffer.from(text));
}

/** `[[[...]]]` nested `depth` deep. */
const nestedArrays = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;

interface Observed {
  readonly patches: PodMergePatch[];
  readonly events: { type: string; reason: string; message: string }[];
}

/** Runs the controller's reconcile for one pod with `images` in a child under the controller's heap flags. */
const reconcileInChild = (images: readonly string[], ca: string): Promise<ChildOutcome<Observed>> =>
  runChild<Observed>('test/unit/hostile/registry-json-child.ts', controllerHeapFlags, {
    REGISTRY_CA: ca,
    IMAGES: JSON.stringify(images),
  });

/** The pod was released in one patch carrying `cause` in its annotation, and a Warning event says the same. */
function expectReleasedNaming(outcome: ChildOutcome<Observed>, cause: string): void {
  expect({ exitCode: outcome.exitCode, signal: outcome.signal, stderr: outcome.stderr }).toEqual({
    exitCode: 0,
    signal: null,
    stderr: '',
  });
  const { patches, events } = outcome.printed ?? { patches: [], events: [] };
  expect(patches).toHaveLength(1);
  const patch = patches[0];
  expect(patch?.spec?.schedulingGates).toEqual([]);
  expect(patch?.metadata.annotations?.[ANNOTATIONS.imageInspectError]).toContain(cause);
  const warnings = events.filter((e) => e.reason === EVENT_REASONS.inspectionError);
  expect(warnings.some((e) => e.message.includes('not retried') || e.message.includes('stopped'))).toBe(true);
  expect(warnings.at(-1)?.message).toContain(cause);
}

describe('hostile registry JSON, in the pod placement controller under its heap limit', () => {
  let registry: FakeServer;
  const tagged = new Map<string, Blob>();
  const blobs = new Map<string, Blob>();
  /** Config blob requests answered only once this many have arrived (so manifests are held meanwhile). */
  let holdBlobsUntil = 0;
  const heldBlobs: (() => void)[] = [];
  let tokenAnswer = '';

  const serve = (res: ServerResponse, blob: Blob) => {
    res.writeHead(200, {
      'content-type': blob.mediaType,
      'content-length': String(blob.size),
      'docker-content-digest': blob.digest,
    });
    res.end(blob.bytes);
  };

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const url = req.url ?? '';
    if (url.startsWith('/token')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(tokenAnswer);
      return;
    }
    const m = /^\/v2\/(.+)\/(manifests|blobs)\/([^/?]+)$/.exec(url);
    if (m?.[1]?.startsWith('token/') && req.headers.authorization !== 'Bearer t') {
      res.writeHead(401, {
        'www-authenticate': `Bearer realm="https://${registry.host}/token",service="fake"`,
        'content-type': 'application/json',
      });
      res.end('{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}');
      return;
    }
    const found = m?.[2] === 'manifests' ? tagged.get(`${m[1]}:${m[3]}`) : blobs.get(m?.[3] ?? '');
    if (found === undefined) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"errors":[{"code":"NOT_FOUND"}]}');
      return;
    }
    if (m?.[2] === 'blobs' && holdBlobsUntil > 0) {
      heldBlobs.push(() => serve(res, found));
      if (heldBlobs.length >= holdBlobsUntil) for (const release of heldBlobs.splice(0)) release();
      return;
    }
    serve(res, found);
  }

  function push(repository: string, manifest: Blob, ...contents: Blob[]): string {
    tagged.set(`${repository}:v1`, manifest);
    for (const b of contents) blobs.set(b.digest, b);
    return `${registry.host}/${repository}:v1`;
  }

  function pushImage(repository: string, image: BuiltImage): string {
    return push(repository, image.manifest, ...image.blobs);
  }

  beforeAll(async () => {
    registry = await startFakeServer();
    registry.handler = handle;
  });
  afterAll(async () => {
    for (const release of heldBlobs.splice(0)) release();
    await registry?.close();
  });

  it('releases a pod whose 8 MiB config blob is millions of nested arrays, naming the blob and the budget', async () => {
    // Just under the 8 MiB config limit: parsed, ~4 million nested arrays take far more than the whole heap.
    const config = blobOf(ociConfigType, Buffer.from(nestedArrays(4 * MiB - 1)));
    const image = push('tenant/nested-config', manifestOver(config), config);
    const outcome = await reconcileInChild([image], registry.caCertPem);
    expectReleasedNaming(outcome, `the image config ${config.digest.slice(0, 'sha256:'.length + 12)}`);
    expect(outcome.printed?.patches[0]?.metadata.annotations?.[ANNOTATIONS.imageInspectError]).toContain(
      `deeper than ${defaultRegistryJsonBudgets.config.maxDepth} levels`,
    );
  }, 60_000);

  it('releases a pod whose four images each have a 4 MiB manifest of a million tiny arrays', async () => {
    // Valid manifests but for a padding field; the config blobs are answered only once all four are asked for,
    // so a client that kept each parsed manifest while fetching its config would hold all four at once.
    holdBlobsUntil = 4;
    const images = Array.from({ length: 4 }, (_, i) => {
      const image = singleImage({ platform: { architecture: 'arm64' }, salt: `padded-${i}` });
      const config = image.blobs[0] as Blob;
      const padding = `,"padding":[${'[],'.repeat(Math.floor((4 * MiB - 400) / 3) - 1)}[]]`;
      return push(`tenant/padded-${i}`, manifestOver(config, padding), config);
    });
    try {
      const outcome = await reconcileInChild(images, registry.caCertPem);
      expectReleasedNaming(
        outcome,
        `has more than ${defaultRegistryJsonBudgets.manifest.maxValues} JSON values`,
      );
      expect(outcome.printed?.patches[0]?.metadata.annotations?.[ANNOTATIONS.imageInspectError]).toMatch(
        /manifest 127\.0\.0\.1:\d+\/tenant\/padded-\d:v1 has more than/,
      );
    } finally {
      holdBlobsUntil = 0;
      for (const release of heldBlobs.splice(0)) release();
    }
  }, 60_000);

  it('refuses a token answer nested 500,000 deep instead of parsing it for the token it also carries', async () => {
    const image = pushImage('token/app', singleImage({ platform: { architecture: 'amd64' }, salt: 'token' }));
    // Under the 1 MiB token limit, and a token that would work: only the budget stands in the way.
    tokenAnswer = `{"token":"t","padding":${nestedArrays(500_000)}}`;
    const outcome = await reconcileInChild([image], registry.caCertPem);
    expectReleasedNaming(
      outcome,
      `the answer nests arrays and objects deeper than ${defaultRegistryJsonBudgets.token.maxDepth} levels`,
    );
  }, 60_000);
});
