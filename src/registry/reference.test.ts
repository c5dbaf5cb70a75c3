import { describe, expect, it } from 'vitest';
import { RegistryError } from './errors.js';
import { apiHost, formatReference, parseImageReference } from './reference.js';

const d = `sha256:${'a'.repeat(64)}`;

describe('parseImageReference', () => {
  it.each([
    ['nginx', 'docker.io/library/nginx:latest'],
    ['nginx:1.27', 'docker.io/library/nginx:1.27'],
    ['library/nginx', 'docker.io/library/nginx:latest'],
    ['bitnami/redis:7', 'docker.io/bitnami/redis:7'],
    ['docker.io/nginx', 'docker.io/library/nginx:latest'],
    ['index.docker.io/library/nginx:1', 'docker.io/library/nginx:1'],
    ['quay.io/openshift/origin-cli:4.16', 'quay.io/openshift/origin-cli:4.16'],
    ['localhost/app', 'localhost/app:latest'],
    ['localhost:5000/team/app:v2', 'localhost:5000/team/app:v2'],
    ['registry.io:5000/nginx', 'registry.io:5000/nginx:latest'],
    [`registry.io:5000/library/nginx:v1.0.0@${d}`, `registry.io:5000/library/nginx@${d}`],
    [`registry.io:5000/nginx@${d}`, `registry.io:5000/nginx@${d}`],
    [`nginx@${d}`, `docker.io/library/nginx@${d}`],
    ['Registry.Example.com/a/b', 'Registry.Example.com/a/b:latest'],
    ['[::1]:5000/x', '[::1]:5000/x:latest'],
    ['a/b__c/d-e.f_g', 'docker.io/a/b__c/d-e.f_g:latest'],
  ])('%s -> %s', (input, expected) => {
    expect(formatReference(parseImageReference(input))).toBe(expected);
  });

  it('drops the tag when a digest is given (the digest wins)', () => {
    const ref = parseImageReference(`quay.io/a/b:v1@${d}`);
    expect(ref).toEqual({ registry: 'quay.io', repository: 'a/b', tag: undefined, digest: d });
  });

  it.each([
    ['', 'empty'],
    ['  nginx', 'white space'],
    [`nginx@${d}@${d}`, 'more than one digest'],
    ['nginx@sha256:abc', 'digest'],
    ['Nginx', 'lowercase'],
    ['quay.io/Org/app', 'lowercase'],
    ['nginx:-bad', 'tag'],
    ['quay.io/a//b', 'path component'],
    ['quay.io/', 'path component'],
    ['quay.io:port/x', 'not a valid host'],
    [`docker.io/${'a'.repeat(250)}`, 'longer than 255'],
  ])('refuses %j (%s)', (input, reason) => {
    let caught: unknown;
    try {
      parseImageReference(input);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(RegistryError);
    expect((caught as RegistryError).code).toBe('TESSERA_REGISTRY_INVALID_REFERENCE');
    expect((caught as RegistryError).message).toContain(reason);
  });

  it('sends Docker Hub API calls to registry-1.docker.io', () => {
    expect(apiHost('docker.io')).toBe('registry-1.docker.io');
    expect(apiHost('quay.io')).toBe('quay.io');
  });
});
