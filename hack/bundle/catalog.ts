// The package and channel blobs of the file-based catalog (FBC). The olm.bundle blobs come from `opm render` of
// the pushed bundle images; this adds what opm cannot know: the package's icon and default channel, and the
// upgrade graph. Releases form one line: each version replaces the one before it, in every channel. Pure.
import { TesseraError } from '../../src/runtime/light.js';
import { csvName } from './bundle.js';
import { BUNDLE_METADATA, type CsvMetadata } from './metadata.js';

export class CatalogInputError extends TesseraError<'TESSERA_PODPLACEMENT_CATALOG_INPUT'> {
  constructor(message: string) {
    super('TESSERA_PODPLACEMENT_CATALOG_INPUT', message);
  }
}

/** The channel that also carries pre-releases. */
export const PRE_RELEASE_CHANNEL = 'candidate';

const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z.-]+))?$/;

/** Orders release versions (major.minor.patch, a pre-release sorts before its release). */
export function compareVersions(a: string, b: string): number {
  const pa = SEMVER.exec(a);
  const pb = SEMVER.exec(b);
  if (!pa || !pb) throw new CatalogInputError(`not a release version: ${JSON.stringify(pa ? b : a)}`);
  for (let i = 1; i <= 3; i++) {
    const d = Number(pa[i]) - Number(pb[i]);
    if (d !== 0) return d;
  }
  if (pa[4] === pb[4]) return 0;
  if (pa[4] === undefined) return 1;
  if (pb[4] === undefined) return -1;
  return comparePreRelease(pa[4].split('.'), pb[4].split('.'));
}

/** SemVer 2.0 §11: identifier by identifier, numbers numerically and below words; a longer list wins a tie. */
function comparePreRelease(a: readonly string[], b: readonly string[]): number {
  const numeric = /^(0|[1-9]\d*)$/;
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i] as string;
    const y = b[i] as string;
    if (x === y) continue;
    const nx = numeric.test(x);
    const ny = numeric.test(y);
    if (nx && ny) return Number(x) - Number(y);
    if (nx !== ny) return nx ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

const isPreRelease = (version: string): boolean => SEMVER.exec(version)?.[4] !== undefined;

/** The upgrade edge of each release: the CSV it replaces (none for the first). */
export function upgradeEdges(
  versions: readonly string[],
  packageName = BUNDLE_METADATA.packageName,
): { name: string; replaces?: string }[] {
  const sorted = [...new Set(versions)].sort(compareVersions);
  if (sorted.length !== versions.length)
    throw new CatalogInputError(`a version is listed twice: ${versions.join(', ')}`);
  return sorted.map((v, i) => ({
    name: csvName(packageName, v),
    ...(i > 0 ? { replaces: csvName(packageName, sorted[i - 1] as string) } : {}),
  }));
}

/**
 * olm.package and one olm.channel per channel, for the released `versions`. Pre-releases (`1.2.0-rc.1`) go to
 * `candidate` only; every other channel carries releases only, so a release candidate never heads `stable`.
 */
export function catalogHead(
  versions: readonly string[],
  meta: CsvMetadata = BUNDLE_METADATA,
): Record<string, unknown>[] {
  if (versions.length === 0) throw new CatalogInputError('a catalog needs at least one bundle');
  const entries = upgradeEdges(versions, meta.packageName);
  if (versions.every(isPreRelease))
    throw new CatalogInputError(
      `only pre-releases (${versions.join(', ')}): ${meta.defaultChannel} would be empty`,
    );
  return [
    {
      schema: 'olm.package',
      name: meta.packageName,
      defaultChannel: meta.defaultChannel,
      description: meta.shortDescription,
      icon: { base64data: Buffer.from(meta.iconSvg).toString('base64'), mediatype: 'image/svg+xml' },
    },
    ...meta.channels.map((channel) => ({
      schema: 'olm.channel',
      package: meta.packageName,
      name: channel,
      entries:
        channel === PRE_RELEASE_CHANNEL
          ? entries
          : upgradeEdges(
              versions.filter((v) => !isPreRelease(v)),
              meta.packageName,
            ),
    })),
  ];
}
