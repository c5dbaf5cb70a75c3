// The images the registry integration tests push, built once, and where they expect each to run.
import { multiPlatformImage, singleImage, type BuiltImage } from '../../../src/devcluster/registry-images.js';

export interface TestImage {
  readonly repository: string;
  readonly tag: string;
  readonly image: BuiltImage;
  readonly architectures: readonly string[];
  readonly kind: 'index' | 'manifest';
}

const bundleLabels = {
  'operators.operatorframework.io.bundle.mediatype.v1': 'registry+v1',
  'operators.operatorframework.io.bundle.package.v1': 'example-operator',
};

export const testImages: readonly TestImage[] = [
  {
    repository: 'team/oci-index',
    tag: 'v1',
    kind: 'index',
    image: multiPlatformImage({
      platforms: [
        { architecture: 'amd64' },
        { architecture: 'arm64', variant: 'v8' },
        { architecture: 'ppc64le' },
        { architecture: 's390x' },
      ],
      attestations: 2,
    }),
    architectures: ['amd64', 'arm64', 'ppc64le', 's390x'],
  },
  {
    repository: 'team/docker-list',
    tag: 'v1',
    kind: 'index',
    image: multiPlatformImage({
      format: 'docker',
      platforms: [
        { architecture: 'amd64' },
        { architecture: 'arm64', variant: 'v8' },
        { architecture: 'arm64' },
      ],
    }),
    architectures: ['amd64', 'arm64'],
  },
  {
    repository: 'team/single-oci',
    tag: 'v1',
    kind: 'manifest',
    image: singleImage({ platform: { architecture: 'ppc64le' } }),
    architectures: ['ppc64le'],
  },
  {
    repository: 'team/single-docker',
    tag: 'v1',
    kind: 'manifest',
    image: singleImage({ platform: { architecture: 's390x' }, format: 'docker' }),
    architectures: ['s390x'],
  },
  {
    repository: 'team/operator-bundle',
    tag: 'v1',
    kind: 'manifest',
    image: singleImage({ platform: { architecture: 'amd64' }, labels: bundleLabels, salt: 'bundle' }),
    architectures: ['amd64', 'arm64', 'ppc64le', 's390x'],
  },
];
