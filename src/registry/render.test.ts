import { describe, expect, it } from 'vitest';
import type { ImageInspection } from './inspector.js';
import { inspectionDocument, renderInspectionTable } from './render.js';

const d = (c: string): string => `sha256:${c.repeat(64)}`;
const index: ImageInspection = {
  reference: 'quay.io/org/app:v1',
  digest: d('a'),
  mediaType: 'application/vnd.oci.image.index.v1+json',
  kind: 'index',
  architectures: ['amd64', 'arm64'],
  platforms: [
    { os: 'linux', architecture: 'amd64', variant: undefined, digest: d('b') },
    { os: 'linux', architecture: 'arm64', variant: 'v8', digest: d('c') },
  ],
  operatorBundle: false,
  source: 'quay.io/org/app',
};

describe('render', () => {
  it('prints the summary and one aligned row per platform', () => {
    expect(renderInspectionTable(index)).toBe(
      [
        'IMAGE          quay.io/org/app:v1',
        `DIGEST         ${d('a')}`,
        'MEDIA TYPE     application/vnd.oci.image.index.v1+json',
        'ARCHITECTURES  amd64, arm64',
        '',
        'OS     ARCH   VARIANT  DIGEST',
        `linux  amd64  -        ${d('b')}`,
        `linux  arm64  v8       ${d('c')}`,
        '',
      ].join('\n'),
    );
  });

  it('names the mirror that answered and marks operator bundles', () => {
    const bundle: ImageInspection = {
      ...index,
      kind: 'manifest',
      source: 'mirror.corp/org/app',
      operatorBundle: true,
      architectures: ['amd64', 'arm64', 'ppc64le', 's390x'],
    };
    const text = renderInspectionTable(bundle);
    expect(text).toContain('SOURCE         mirror.corp/org/app');
    expect(text).toContain('amd64, arm64, ppc64le, s390x (operator bundle');
  });

  it('says which candidate a short name was found at, and why, in the table and the document', () => {
    const short: ImageInspection = {
      ...index,
      reference: 'quay.io/app:v1',
      source: 'quay.io/app',
      shortName: {
        name: 'app:v1',
        rule: 'search-registries',
        candidates: [
          { reference: 'reg.corp/app:v1', outcome: 'not-found' },
          { reference: 'quay.io/app:v1', outcome: 'chosen' },
        ],
      },
    };
    const lines = renderInspectionTable(short).split('\n');
    expect(lines[0]).toBe('IMAGE          quay.io/app:v1');
    expect(lines.slice(4, 7)).toEqual([
      '',
      'short name app:v1: the search registries are tried in order, as CRI-O does, and the first that has it is used: reg.corp/app:v1 not there, quay.io/app:v1 chosen',
      '',
    ]);
    expect(inspectionDocument(short)['shortName']).toEqual(short.shortName);
    expect(inspectionDocument(index)).not.toHaveProperty('shortName');
  });

  it('gives programs stable fields with variant null when absent', () => {
    expect(inspectionDocument(index).platforms).toEqual([
      { os: 'linux', architecture: 'amd64', variant: null, digest: d('b') },
      { os: 'linux', architecture: 'arm64', variant: 'v8', digest: d('c') },
    ]);
  });
});
