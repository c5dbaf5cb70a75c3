import { describe, expect, it } from 'vitest';
import { RegistryError } from './errors.js';
import { formatReference } from './reference.js';
import {
  candidateAbsent,
  describeShortNameChoice,
  isShortName,
  noCandidateError,
  resolveShortName,
} from './short-names.js';

const d = `sha256:${'c'.repeat(64)}`;
const search = ['registry.corp:5000', 'quay.io', 'docker.io'];

describe('resolveShortName', () => {
  // image, search registries, rule, candidates in the order the runtime tries them
  it.each<[string, string[], string, string[]]>([
    // Fully qualified: itself, whatever the search registries (containers/image's IsShortName).
    ['quay.io/team/app:1', search, 'qualified', ['quay.io/team/app:1']],
    ['docker.io/nginx', search, 'qualified', ['docker.io/library/nginx:latest']],
    ['index.docker.io/library/nginx:1', search, 'qualified', ['docker.io/library/nginx:1']],
    ['localhost/app', search, 'qualified', ['localhost/app:latest']],
    ['localhost:5000/app:2', search, 'qualified', ['localhost:5000/app:2']],
    ['Registry.Example.com/a/b', search, 'qualified', ['Registry.Example.com/a/b:latest']],
    // No search registries: Docker's normalisation, as today and as containerd does.
    ['nginx', [], 'docker-hub', ['docker.io/library/nginx:latest']],
    ['bitnami/redis:7', [], 'docker-hub', ['docker.io/bitnami/redis:7']],
    [`nginx:1@${d}`, [], 'docker-hub', [`docker.io/library/nginx@${d}`]],
    // Search registries: one candidate each, in order; only docker.io gains library/ (ParseNormalizedNamed).
    [
      'nginx',
      search,
      'search-registries',
      ['registry.corp:5000/nginx:latest', 'quay.io/nginx:latest', 'docker.io/library/nginx:latest'],
    ],
    [
      'library/nginx:1.27',
      search,
      'search-registries',
      ['registry.corp:5000/library/nginx:1.27', 'quay.io/library/nginx:1.27', 'docker.io/library/nginx:1.27'],
    ],
    // A digest short name is still a short name; tag+digest keeps the digest (CRI-O drops the tag).
    [
      `team/app:v1@${d}`,
      ['registry.corp:5000', 'quay.io'],
      'search-registries',
      [`registry.corp:5000/team/app@${d}`, `quay.io/team/app@${d}`],
    ],
    // The admin's list replaces the default: docker.io is not searched unless listed.
    ['team/app:1', ['registry.corp:5000'], 'search-registries', ['registry.corp:5000/team/app:1']],
  ])('%s with %j: %s', (image, registries, rule, candidates) => {
    const resolution = resolveShortName(image, registries);
    expect(resolution.rule).toBe(rule);
    expect(resolution.candidates.map(formatReference)).toEqual(candidates);
  });

  it('refuses an invalid reference, naming it, and a search registry that makes one', () => {
    expect(() => resolveShortName('nginx:-bad', search)).toThrow(/"nginx:-bad".*tag/);
    // An uppercase first component is a host to Docker but a short name to CRI-O, whose candidates are invalid.
    expect(resolveShortName('Team/app', []).candidates.map(formatReference)).toEqual(['Team/app:latest']);
    expect(() => resolveShortName('Team/app', search)).toThrow(RegistryError);
    expect(() => resolveShortName('app', ['bad host'])).toThrow(/invalid image reference/);
  });
});

describe('isShortName', () => {
  it.each([
    ['fedora', true],
    ['fedora:latest', true],
    ['library/fedora', true],
    [`busybox@${d}`, true],
    ['quay.io/fedora', false],
    ['docker.io/fedora', false],
    ['localhost/fedora', false],
    ['localhost:5000/fedora:latest', false],
    ['example.foo.this.may.be.garbage.but.maybe.not:1234/fedora:latest', false],
  ])('%s: %s', (image, short) => {
    expect(isShortName(image)).toBe(short);
  });
});

describe('the search past a candidate', () => {
  it('goes on only past a candidate that lacks the image for good', () => {
    expect(candidateAbsent(new RegistryError('TESSERA_REGISTRY_NOT_FOUND', 'x'))).toBe('not-found');
    expect(candidateAbsent(new RegistryError('TESSERA_REGISTRY_UNAUTHORIZED', 'x'))).toBe('unauthorized');
    expect(candidateAbsent(new RegistryError('TESSERA_REGISTRY_BLOCKED', 'x'))).toBe('blocked');
    // The runtime might still pull a candidate that is down or failing: the search stops there.
    expect(
      candidateAbsent(new RegistryError('TESSERA_REGISTRY_UNAVAILABLE', 'x', { retryable: true })),
    ).toBeUndefined();
    expect(candidateAbsent(new RegistryError('TESSERA_REGISTRY_TIMEOUT', 'x'))).toBeUndefined();
    expect(
      candidateAbsent(
        new RegistryError('TESSERA_REGISTRY_NOT_FOUND', 'a mirror timed out', { retryable: true }),
      ),
    ).toBeUndefined();
    expect(candidateAbsent(new RegistryError('TESSERA_REGISTRY_UNSUPPORTED_MANIFEST', 'x'))).toBeUndefined();
  });

  it('says which candidates were tried when none has the image', () => {
    const err = noCandidateError(
      'team/app:1',
      [
        { reference: 'a.io/team/app:1', outcome: 'not-found' },
        { reference: 'b.io/team/app:1', outcome: 'unauthorized' },
      ],
      undefined,
    );
    expect(err.code).toBe('TESSERA_REGISTRY_UNAUTHORIZED');
    expect(err.retryable).toBe(false);
    expect(err.message).toBe(
      'image team/app:1: a short name that no search registry has (tried in order: a.io/team/app:1 not there, b.io/team/app:1 not authorized)',
    );
    expect(
      noCandidateError('x', [{ reference: 'a.io/x:latest', outcome: 'not-found' }], undefined).code,
    ).toBe('TESSERA_REGISTRY_NOT_FOUND');
    expect(noCandidateError('x', [{ reference: 'a.io/x:latest', outcome: 'blocked' }], undefined).code).toBe(
      'TESSERA_REGISTRY_BLOCKED',
    );
  });

  it('describes the choice for people', () => {
    expect(
      describeShortNameChoice({
        name: 'team/app:1',
        rule: 'search-registries',
        candidates: [
          { reference: 'a.io/team/app:1', outcome: 'not-found' },
          { reference: 'b.io/team/app:1', outcome: 'chosen' },
          { reference: 'c.io/team/app:1', outcome: 'not-tried' },
        ],
      }),
    ).toBe(
      'short name team/app:1: the search registries are tried in order, as CRI-O does, and the first that has it is used: a.io/team/app:1 not there, b.io/team/app:1 chosen, c.io/team/app:1 not tried',
    );
    expect(
      describeShortNameChoice({
        name: 'nginx',
        rule: 'docker-hub',
        candidates: [{ reference: 'docker.io/library/nginx:latest', outcome: 'chosen' }],
      }),
    ).toBe(
      'short name nginx: no search registries are configured, so Docker Hub: docker.io/library/nginx:latest',
    );
  });
});
