import { describe, expect, it } from 'vitest';
import {
  admissionVerdict,
  assertAdmitted,
  describeSignatureRequirement,
  policyLookupNames,
  PolicyRefusalError,
  type AdmissionScope,
  type ImageAdmissionPolicy,
} from './image-admission.js';
import { parseImageReference } from './reference.js';

const ALLOWED = 'image.config.openshift.io/cluster allowedRegistries';
const BLOCKED = 'image.config.openshift.io/cluster blockedRegistries';

const allowOnly = (...scopes: string[]): ImageAdmissionPolicy => ({
  defaultRequirement: 'reject',
  defaultRule: ALLOWED,
  scopes: scopes.map((scope) => ({ scope, requirement: 'accept', rule: ALLOWED })),
});
const block = (...scopes: string[]): ImageAdmissionPolicy => ({
  defaultRequirement: 'accept',
  scopes: scopes.map((scope) => ({ scope, requirement: 'reject', rule: BLOCKED })),
});
const signed = (scope: string, rule: string, namespace?: string): AdmissionScope => ({
  scope,
  requirement: 'signed',
  rule,
  ...(namespace === undefined ? {} : { namespace }),
});

describe('policyLookupNames', () => {
  it.each([
    ['quay.io/team/app:1', ['quay.io/team/app:1', 'quay.io/team/app', 'quay.io/team', 'quay.io', '*.io']],
    // A digest wins over a tag given with it (CRI-O drops the tag); the port is kept in the namespaces only.
    [
      'reg.example.com:5000/app:1@sha256:' + 'a'.repeat(64),
      [
        `reg.example.com:5000/app@sha256:${'a'.repeat(64)}`,
        'reg.example.com:5000/app',
        'reg.example.com:5000',
        '*.example.com',
        '*.com',
      ],
    ],
    [
      'nginx',
      ['docker.io/library/nginx:latest', 'docker.io/library/nginx', 'docker.io/library', 'docker.io', '*.io'],
    ],
    ['localhost:5000/x:1', ['localhost:5000/x:1', 'localhost:5000/x', 'localhost:5000']],
  ])('%s -> most specific first', (image, names) => {
    expect(policyLookupNames(parseImageReference(image))).toEqual(names);
  });
});

describe('admissionVerdict: the nodes’ policy.json, as the MCO writes it', () => {
  const cases: {
    name: string;
    image: string;
    policy: ImageAdmissionPolicy;
    namespace?: string;
    admitted: boolean;
    rule?: string;
    signedBy?: string[];
  }[] = [
    { name: 'allowed registry', image: 'quay.io/a/b:1', policy: allowOnly('quay.io'), admitted: true },
    {
      name: 'registry not allowed: the reject default',
      image: 'evil.example.com/app:1',
      policy: allowOnly('quay.io'),
      admitted: false,
      rule: ALLOWED,
    },
    {
      name: 'allowed namespace, other namespace of the same registry refused',
      image: 'quay.io/other/app:1',
      policy: allowOnly('quay.io/team'),
      admitted: false,
      rule: ALLOWED,
    },
    {
      name: 'a scope is a path prefix at a slash, not a string prefix',
      image: 'quay.io/teamster/app:1',
      policy: allowOnly('quay.io/team'),
      admitted: false,
    },
    {
      name: 'wildcard allows a subdomain',
      image: 'a.b.example.com/app:1',
      policy: allowOnly('*.example.com'),
      admitted: true,
    },
    {
      name: 'wildcard does not allow the domain itself',
      image: 'example.com/app:1',
      policy: allowOnly('*.example.com'),
      admitted: false,
    },
    {
      name: 'a host scope does not cover the host on another port',
      image: 'quay.io:5000/app:1',
      policy: allowOnly('quay.io'),
      admitted: false,
    },
    {
      name: 'wildcards ignore the port',
      image: 'r.example.com:5000/app:1',
      policy: allowOnly('*.example.com'),
      admitted: true,
    },
    {
      name: 'blocked registry',
      image: 'evil.example.com/app:1',
      policy: block('evil.example.com'),
      admitted: false,
      rule: BLOCKED,
    },
    { name: 'not blocked', image: 'quay.io/app:1', policy: block('evil.example.com'), admitted: true },
    {
      name: 'Docker Hub short name judged by its normalised name',
      image: 'nginx',
      policy: block('docker.io/library'),
      admitted: false,
    },
    {
      name: 'the most specific scope wins: an allowed repository under a blocked registry',
      image: 'quay.io/good/app:1',
      policy: {
        defaultRequirement: 'accept',
        scopes: [
          { scope: 'quay.io', requirement: 'reject', rule: BLOCKED },
          { scope: 'quay.io/good', requirement: 'accept', rule: ALLOWED },
        ],
      },
      admitted: true,
    },
    {
      name: 'a signature scope admits (Tessera cannot verify it) and says so',
      image: 'quay.io/signed/app:1',
      policy: { defaultRequirement: 'accept', scopes: [signed('quay.io/signed', 'ClusterImagePolicy p')] },
      admitted: true,
      signedBy: ['ClusterImagePolicy p'],
    },
    {
      name: 'a signature scope more specific than an allowed registry still admits',
      image: 'quay.io/signed/app:1',
      policy: {
        ...allowOnly('quay.io'),
        scopes: [...allowOnly('quay.io').scopes, signed('quay.io/signed', 'CIP')],
      },
      admitted: true,
      signedBy: ['CIP'],
    },
    {
      name: 'an ImagePolicy applies in its own namespace',
      image: 'quay.io/x/app:1',
      policy: {
        defaultRequirement: 'accept',
        scopes: [signed('quay.io/x', 'ImagePolicy p in namespace a', 'a')],
      },
      namespace: 'a',
      admitted: true,
      signedBy: ['ImagePolicy p in namespace a'],
    },
    {
      name: 'an ImagePolicy of another namespace does not apply',
      image: 'quay.io/x/app:1',
      policy: { defaultRequirement: 'accept', scopes: [signed('quay.io/x', 'ImagePolicy p', 'a')] },
      namespace: 'b',
      admitted: true,
    },
    {
      name: 'a scope named like an object property is only a string',
      image: 'quay.io/app:1',
      policy: block('__proto__', 'constructor', 'toString'),
      admitted: true,
    },
    {
      name: 'an exact image scope',
      image: 'quay.io/team/app:1',
      policy: block('quay.io/team/app:1'),
      admitted: false,
    },
    {
      name: 'an exact image scope does not cover another tag',
      image: 'quay.io/team/app:2',
      policy: block('quay.io/team/app:1'),
      admitted: true,
    },
  ];
  it.each(cases)('$name', (c) => {
    const verdict = admissionVerdict(parseImageReference(c.image), c.policy, c.namespace);
    expect(verdict.admitted).toBe(c.admitted);
    if (!verdict.admitted && c.rule !== undefined) expect(verdict.rule).toBe(c.rule);
    if (verdict.admitted) expect(verdict.signatureRequiredBy?.map((s) => s.rule)).toEqual(c.signedBy);
  });

  it('answers a policy of thousands of scopes by lookups, not by trying every scope', () => {
    const scopes = Array.from({ length: 5000 }, (_, i) => `registry${i}.example.com/${'x/'.repeat(50)}y`);
    const policy = allowOnly(...scopes);
    const ref = parseImageReference(`registry4999.example.com/${'x/'.repeat(50)}y:1`);
    expect(admissionVerdict(ref, policy).admitted).toBe(true);
    // The names looked up are those of the reference, however many scopes there are.
    expect(policyLookupNames(ref)).toHaveLength(1 + 52 + 2);
  });
});

describe('PolicyRefusalError', () => {
  it('names the registry and the rule, and says the image was not inspected', () => {
    const run = (): void =>
      assertAdmitted(parseImageReference('evil.example.com/app:1'), allowOnly('quay.io'));
    expect(run).toThrow(PolicyRefusalError);
    expect(run).toThrow(
      'registry evil.example.com is not in image.config.openshift.io/cluster allowedRegistries: the nodes would refuse to pull image evil.example.com/app:1, so it was not inspected',
    );
  });

  it('names a blocked scope narrower than the registry', () => {
    expect(() => assertAdmitted(parseImageReference('quay.io/bad/app:1'), block('quay.io/bad'))).toThrow(
      'scope quay.io/bad is in image.config.openshift.io/cluster blockedRegistries',
    );
  });

  it('carries the stable code of a blocked registry (permanent, a short name moves on past it)', () => {
    try {
      assertAdmitted(parseImageReference('evil.example.com/app:1'), block('evil.example.com'));
      expect.unreachable();
    } catch (err) {
      expect((err as PolicyRefusalError).code).toBe('TESSERA_REGISTRY_BLOCKED');
      expect((err as PolicyRefusalError).rule).toBe(BLOCKED);
    }
  });

  it('admits everything without a policy', () => {
    expect(() => assertAdmitted(parseImageReference('anything.example/app:1'), undefined)).not.toThrow();
  });
});

describe('describeSignatureRequirement', () => {
  it('names the policy and its scope and says nothing was verified', () => {
    expect(
      describeSignatureRequirement([signed('quay.io/s', 'ClusterImagePolicy p (policyType PublicKey)')]),
    ).toBe(
      'signatures required by ClusterImagePolicy p (policyType PublicKey) (scope quay.io/s): Tessera does not verify sigstore signatures, so it inspected the image; the nodes refuse to run it unless it is signed as that policy says',
    );
  });
});
