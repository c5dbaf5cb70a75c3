// `npm run bundle`: builds and pushes the OLM bundle image and the file-based catalog image, like `npm run image`
// builds the operator image: reproducible layer tars (GNU tar), go-containerregistry's crane for the OCI plumbing
// and the push, opm (operator-registry, built by hack/build-binaries.sh) to render and validate the catalog.
//
//   npm run bundle -- bundle --registry HOST --operator-image REF@sha256:... [--repository tessera/bundle]
//                    [--version V] [--replaces tessera.vX.Y.Z] [--created-at RFC3339] [--tag T] [--ca-file CA]
//                    [--auth-file CONFIG]
//       renders bundle/ for that image (by digest) and version, pushes it, prints HOST/REPO@digest; the CSV's
//       createdAt is the version's date in hack/bundle/metadata.ts unless --created-at gives one
//   npm run bundle -- catalog --registry HOST --bundle REF@sha256:... [--bundle ...] [--repository tessera/catalog]
//                    [--tag T] [--out DIR] [--ca-file CA] [--auth-file CONFIG]
//       renders the bundles with opm, adds the package and channels (each release replaces the one before),
//       runs `opm validate`, pushes the catalog image, prints REF@digest
//
// Both images are OCI indexes for linux/amd64, arm64, ppc64le and s390x over one data layer (a bundle or catalog
// holds no executable), so any node of a multi-architecture cluster can pull them.
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  writeFileSync,
  copyFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parseAllDocuments, stringify } from 'yaml';
import { ensureBinaries } from '../../src/devcluster/binaries.js';
import { bundleAnnotations, renderBundle } from './bundle.js';
import { catalogHead } from './catalog.js';
import { BUNDLE_METADATA } from './metadata.js';
import { readBundleSources } from './sources.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const PLATFORMS = ['amd64', 'arm64', 'ppc64le', 's390x'] as const;
/** Fixed image times (no wall clock in a digest): the Unix epoch, as SOURCE_DATE_EPOCH=0 would give. */
const CREATED = '1970-01-01T00:00:00Z';
/** Where a catalog image keeps its FBC (the label OLM and opm read). */
const CATALOG_DIR = 'configs';

function die(message: string): never {
  process.stderr.write(`bundle: ${message}\n`);
  process.exit(1);
}
const log = (message: string) => process.stderr.write(`[bundle] ${message}\n`);

function run(file: string, args: string[], input?: string): string {
  try {
    return execFileSync(file, args, {
      input,
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    die(`${path.basename(file)} ${args.join(' ')} failed: ${e.stderr?.trim() || e.message}`);
  }
}

/** A reproducible tar of DIR's contents: sorted, root-owned, fixed mtime, no atime/ctime (as hack/image does). */
function layerTar(dir: string, out: string): void {
  run('tar', [
    '--format=posix',
    '--sort=name',
    '--mtime=@0',
    '--numeric-owner',
    // Modes from the files' type, not the umask they were written under: same digests on every machine.
    '--mode=u+rw,go+r,go-w,a+X',
    '--owner=0',
    '--group=0',
    '--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime',
    '-C',
    dir,
    '-cf',
    out,
    '.',
  ]);
}

/** Pushes DIR as a four-platform index REF:TAG whose images carry `labels`; returns REF@digest. */
function pushDataImage(
  crane: string,
  dir: string,
  ref: string,
  labels: Record<string, string>,
  work: string,
): string {
  const tar = path.join(work, `${path.basename(dir)}.tar`);
  layerTar(dir, tar);
  const manifests: string[] = [];
  for (const arch of PLATFORMS) {
    const platformRef = `${ref}-${arch}`;
    run(crane, ['append', '--oci-empty-base', '-f', tar, '-t', platformRef]);
    const config = JSON.parse(run(crane, ['config', platformRef])) as Record<string, unknown>;
    config['architecture'] = arch;
    config['os'] = 'linux';
    config['created'] = CREATED;
    config['history'] = [{ created: CREATED, created_by: 'hack/bundle/build.ts', comment: 'data only' }];
    config['config'] = { Labels: labels };
    run(crane, ['edit', 'config', platformRef], JSON.stringify(config));
    manifests.push(
      '-m',
      `${ref.slice(0, ref.lastIndexOf(':'))}@${run(crane, ['digest', platformRef]).trim()}`,
    );
  }
  run(crane, ['index', 'append', '--tag', ref, ...manifests]);
  // By digest only: what a catalog and a CatalogSource must name (opm refuses tag+digest references).
  return `${ref.slice(0, ref.lastIndexOf(':'))}@${run(crane, ['digest', ref]).trim()}`;
}

function common(values: { 'ca-file'?: string; 'auth-file'?: string }, work: string): void {
  // crane and opm read credentials from $DOCKER_CONFIG/config.json and, as Go programs, trust $SSL_CERT_FILE.
  if (values['auth-file']) {
    mkdirSync(path.join(work, 'docker'));
    copyFileSync(values['auth-file'], path.join(work, 'docker/config.json'));
    process.env['DOCKER_CONFIG'] = path.join(work, 'docker');
  }
  if (values['ca-file']) process.env['SSL_CERT_FILE'] = realpathSync(values['ca-file']);
}

const OPTIONS = {
  registry: { type: 'string' },
  repository: { type: 'string' },
  tag: { type: 'string' },
  'ca-file': { type: 'string' },
  'auth-file': { type: 'string' },
  'operator-image': { type: 'string' },
  version: { type: 'string' },
  replaces: { type: 'string' },
  'created-at': { type: 'string' },
  bundle: { type: 'string', multiple: true },
  out: { type: 'string' },
} as const;

async function buildBundle(
  values: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'],
  work: string,
): Promise<string> {
  const operatorImage = values['operator-image'];
  if (!operatorImage?.includes('@sha256:'))
    die('--operator-image REF@sha256:... is required (the pushed operator image, by digest)');
  const sources = await readBundleSources(root, {
    version: values.version,
    image: operatorImage,
    replaces: values.replaces,
    createdAt: values['created-at'],
  });
  const dir = path.join(work, 'bundle');
  for (const file of renderBundle(sources)) {
    mkdirSync(path.dirname(path.join(dir, file.path)), { recursive: true });
    writeFileSync(path.join(dir, file.path), file.content);
  }
  const { crane } = await ensureBinaries(['crane']);
  const ref = `${values.registry}/${values.repository ?? 'tessera/bundle'}:${values.tag ?? `v${sources.version}`}`;
  log(`pushing bundle ${ref} (operator image ${operatorImage})`);
  return pushDataImage(crane, dir, ref, bundleAnnotations(), work);
}

async function buildCatalog(
  values: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'],
  work: string,
): Promise<string> {
  const bundles = values.bundle ?? [];
  if (bundles.length === 0) die('--bundle REF@sha256:... is required (one per release in the catalog)');
  const { opm, crane } = await ensureBinaries(['opm', 'crane']);
  const rendered: Record<string, unknown>[] = [];
  for (const ref of bundles) {
    for (const doc of parseAllDocuments(run(opm, ['render', ref, '--output', 'yaml']))) {
      const blob = (Array.isArray(doc) ? undefined : doc.toJS()) as Record<string, unknown> | null;
      if (blob) rendered.push(blob);
    }
  }
  // The catalog does not depend on the order of --bundle flags.
  rendered.sort((a, b) => (String(a['name']) < String(b['name']) ? -1 : 1));
  const versions = rendered
    .filter((b) => b['schema'] === 'olm.bundle')
    .map((b) => {
      const props = (b['properties'] as { type: string; value: { version?: string } }[]) ?? [];
      const version = props.find((p) => p.type === 'olm.package')?.value.version;
      if (!version) die(`opm rendered bundle ${String(b['name'])} without an olm.package version`);
      return version;
    });
  const dir = path.join(work, 'catalog');
  const packageDir = path.join(dir, CATALOG_DIR, BUNDLE_METADATA.packageName);
  mkdirSync(packageDir, { recursive: true });
  const fbc = [...catalogHead(versions), ...rendered]
    .map((b) => stringify(b, { lineWidth: 0 }))
    .join('---\n');
  writeFileSync(path.join(packageDir, 'catalog.yaml'), fbc);
  run(opm, ['validate', path.join(dir, CATALOG_DIR)]);
  log(`opm validate: ${versions.length} bundle(s) of ${BUNDLE_METADATA.packageName} valid`);
  if (values.out) {
    rmSync(values.out, { recursive: true, force: true });
    cpSync(path.join(dir, CATALOG_DIR), values.out, { recursive: true });
  }
  const ref = `${values.registry}/${values.repository ?? 'tessera/catalog'}:${values.tag ?? 'latest'}`;
  log(`pushing catalog ${ref}`);
  return pushDataImage(
    crane,
    dir,
    ref,
    { 'operators.operatorframework.io.index.configs.v1': `/${CATALOG_DIR}` },
    work,
  );
}

async function main(): Promise<void> {
  const { positionals, values } = parseArgs({ options: OPTIONS, allowPositionals: true });
  const command = positionals[0];
  if (command !== 'bundle' && command !== 'catalog')
    die('usage: npm run bundle -- bundle|catalog --registry HOST ... (see hack/bundle/build.ts)');
  if (!values.registry) die('--registry HOST[:PORT] is required');
  const work = mkdtempSync(path.join(os.tmpdir(), 'tessera-bundle-'));
  try {
    common(values, work);
    const ref = command === 'bundle' ? await buildBundle(values, work) : await buildCatalog(values, work);
    process.stdout.write(`${ref}\n`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
