// Parses image references with Docker's normalisation: `nginx` -> `docker.io/library/nginx:latest`,
// `index.docker.io` -> `docker.io`, registry ports and `localhost` kept, tag+digest -> the digest wins.
// Guarantees: a returned reference is valid for the distribution API (lowercase repository, tag and digest
// grammar); invalid input throws InvalidReferenceError with the reason. Pure: no I/O.
import { InvalidReferenceError } from './errors.js';

export interface ImageReference {
  /** Registry host with optional port, as users write it (`docker.io`, `quay.io`, `127.0.0.1:5000`). */
  readonly registry: string;
  /** Repository path inside the registry (`library/nginx`). */
  readonly repository: string;
  /** Tag; undefined when the reference is by digest (a tag given together with a digest is dropped). */
  readonly tag: string | undefined;
  /** Manifest digest (`sha256:...`), when given. */
  readonly digest: string | undefined;
}

export const dockerHubRegistry = 'docker.io';
const legacyDockerHubHost = 'index.docker.io';
/** Where Docker Hub's distribution API actually answers. */
export const dockerHubApiHost = 'registry-1.docker.io';
const defaultTag = 'latest';
const maxNameLength = 255;

const componentPattern = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const domainPattern =
  /^(?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?$/;
const tagPattern = /^[\w][\w.-]{0,127}$/;
const digestPattern = /^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$/;
const sha256Pattern = /^sha256:[a-f0-9]{64}$/;
const sha512Pattern = /^sha512:[a-f0-9]{128}$/;

/** Validates a digest string (`sha256:<64 hex>`, `sha512:<128 hex>`, other registered algorithms by grammar). */
export function isValidDigest(digest: string): boolean {
  if (!digestPattern.test(digest)) return false;
  if (digest.startsWith('sha256:')) return sha256Pattern.test(digest);
  if (digest.startsWith('sha512:')) return sha512Pattern.test(digest);
  return true;
}

/** Parses and normalises `input`. Throws InvalidReferenceError. */
export function parseImageReference(input: string): ImageReference {
  const fail = (reason: string): never => {
    throw new InvalidReferenceError(input, reason);
  };
  const text = input.trim();
  if (text === '') fail('the reference is empty');
  if (text !== input) fail('leading or trailing white space');

  let rest = text;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (digest.includes('@')) fail('more than one digest');
    if (!isValidDigest(digest))
      fail(`digest ${JSON.stringify(digest)} is not <algorithm>:<hex> (e.g. sha256 with 64 hex digits)`);
  }

  // A tag follows the last ':' that comes after the last '/'; an earlier ':' belongs to a registry port.
  let tag: string | undefined;
  const lastSlash = rest.lastIndexOf('/');
  const colon = rest.indexOf(':', lastSlash + 1);
  if (colon >= 0) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!tagPattern.test(tag))
      fail(`tag ${JSON.stringify(tag)} must match [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`);
  }
  if (rest === '') fail('the repository name is empty');

  let registry: string;
  let repository: string;
  const firstSlash = rest.indexOf('/');
  const first = firstSlash < 0 ? '' : rest.slice(0, firstSlash);
  const looksLikeRegistry =
    firstSlash >= 0 &&
    (first.includes('.') || first.includes(':') || first === 'localhost' || first !== first.toLowerCase());
  if (looksLikeRegistry) {
    registry = first;
    repository = rest.slice(firstSlash + 1);
    if (!domainPattern.test(registry))
      fail(`registry ${JSON.stringify(registry)} is not a valid host[:port]`);
  } else {
    registry = dockerHubRegistry;
    repository = rest;
  }
  if (registry === legacyDockerHubHost) registry = dockerHubRegistry;
  if (registry === dockerHubRegistry && !repository.includes('/')) repository = `library/${repository}`;

  if (repository !== repository.toLowerCase()) fail('repository names must be lowercase');
  for (const component of repository.split('/')) {
    if (!componentPattern.test(component)) {
      fail(
        `path component ${JSON.stringify(component)} must be lowercase letters, digits and single separators (. _ __ -)`,
      );
    }
  }
  if (registry.length + 1 + repository.length > maxNameLength)
    fail(`the name is longer than ${maxNameLength} characters`);

  return { registry, repository, tag: digest === undefined ? (tag ?? defaultTag) : undefined, digest };
}

/** `registry/repository` (the name without tag or digest). */
export function referenceName(ref: ImageReference): string {
  return `${ref.registry}/${ref.repository}`;
}

/** Canonical string: `registry/repository@digest` or `registry/repository:tag`. */
export function formatReference(ref: ImageReference): string {
  return ref.digest === undefined
    ? `${referenceName(ref)}:${ref.tag ?? defaultTag}`
    : `${referenceName(ref)}@${ref.digest}`;
}

/** The tag or digest to put in `/v2/<name>/manifests/<here>`. */
export function manifestReference(ref: ImageReference): string {
  return ref.digest ?? ref.tag ?? defaultTag;
}

/** Host that serves the distribution API for `registry` (Docker Hub's API lives on another host). */
export function apiHost(registry: string): string {
  return registry === dockerHubRegistry ? dockerHubApiHost : registry;
}
