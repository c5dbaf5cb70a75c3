// Manifest media types the inspector asks for and understands, and the ones it refuses. Wire strings only.

export const ociImageIndex = 'application/vnd.oci.image.index.v1+json';
export const ociImageManifest = 'application/vnd.oci.image.manifest.v1+json';
export const dockerManifestList = 'application/vnd.docker.distribution.manifest.list.v2+json';
export const dockerManifest = 'application/vnd.docker.distribution.manifest.v2+json';
export const dockerSchema1Manifest = 'application/vnd.docker.distribution.manifest.v1+json';
export const dockerSchema1SignedManifest = 'application/vnd.docker.distribution.manifest.v1+prettyjws';

/** Sent as `Accept` on manifest requests: the four types we can read, indexes first. */
export const manifestAcceptHeader = [
  ociImageIndex,
  dockerManifestList,
  ociImageManifest,
  dockerManifest,
].join(', ');

export type ManifestKind = 'index' | 'manifest';

/** Index or single manifest for a supported media type; undefined for anything else. */
export function manifestKind(mediaType: string): ManifestKind | undefined {
  switch (mediaType) {
    case ociImageIndex:
    case dockerManifestList:
      return 'index';
    case ociImageManifest:
    case dockerManifest:
      return 'manifest';
    default:
      return undefined;
  }
}

export function isSchema1(mediaType: string): boolean {
  return mediaType === dockerSchema1Manifest || mediaType === dockerSchema1SignedManifest;
}
