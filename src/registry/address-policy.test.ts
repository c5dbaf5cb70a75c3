import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../runtime/index.js';
import {
  AddressPolicy,
  defaultAddressPolicy,
  loopbackRanges,
  maxAddressPolicyRanges,
} from './address-policy.js';

const allowed = (policy: AddressPolicy, address: string): boolean => policy.judge(address).allow;

describe('AddressPolicy', () => {
  it.each(['169.254.169.254', 'fe80::1', '::ffff:169.254.169.254', '0.0.0.0', '0.1.2.3', '::'])(
    'always refuses the link-local or unspecified address %s, whatever the lists say',
    (address) => {
      const permissive = new AddressPolicy({ allow: ['0.0.0.0/0', '::/0'] });
      expect(defaultAddressPolicy.judge(address)).toMatchObject({ allow: false });
      expect(permissive.judge(address)).toEqual({
        allow: false,
        reason: expect.stringMatching(/is a (link-local|unspecified) address$/) as string,
      });
    },
  );

  it('allows every other address by default (loopback and private registries keep working)', () => {
    for (const address of ['127.0.0.1', '::1', '10.0.0.1', '192.168.1.1', 'fd00::1', '8.8.8.8'])
      expect(allowed(defaultAddressPolicy, address)).toBe(true);
  });

  it('refuses addresses in a denied range, IPv4, IPv6 and IPv4-mapped IPv6', () => {
    const policy = new AddressPolicy({ deny: ['10.128.0.0/14', 'fd00::/8', ...loopbackRanges] });
    expect(policy.judge('10.129.3.4')).toEqual({
      allow: false,
      reason: "10.129.3.4 is in a range the operator's address policy denies",
    });
    expect(allowed(policy, '::ffff:10.129.3.4')).toBe(false);
    expect(allowed(policy, 'fd12::1')).toBe(false);
    expect(allowed(policy, '127.0.0.2')).toBe(false);
    expect(allowed(policy, '::1')).toBe(false);
    expect(allowed(policy, '10.132.0.1')).toBe(true);
    expect(allowed(policy, 'febf::1')).toBe(false); // link-local (fe80::/10): the built-in rule
    expect(allowed(policy, '2001:db8::1')).toBe(true);
  });

  it('lets the most specific range decide, and an allow range win over a deny range of the same size', () => {
    const policy = new AddressPolicy({
      deny: ['172.30.0.0/16', '172.30.5.0/24', '127.0.0.0/8'],
      allow: ['172.30.0.0/17', '172.30.5.7', '127.0.0.0/8'],
    });
    expect(allowed(policy, '172.30.200.1')).toBe(false); // only the /16 deny
    expect(allowed(policy, '172.30.1.1')).toBe(true); // the /17 allow is more specific
    expect(allowed(policy, '172.30.5.8')).toBe(false); // the /24 deny is more specific still
    expect(allowed(policy, '172.30.5.7')).toBe(true); // a single address, /32
    expect(allowed(policy, '127.0.0.1')).toBe(true); // equal length: the allow range is the exception
  });

  it('judges URL hostnames: bracketed IPv6 literals, and names only once resolved', () => {
    const policy = new AddressPolicy({ deny: ['::1/128', '10.0.0.0/8'] });
    expect(policy.judgeHost('[::1]')).toMatchObject({ allow: false });
    expect(policy.judgeHost('10.1.1.1')).toMatchObject({ allow: false });
    expect(policy.judgeHost('[fe80::1]')).toMatchObject({ allow: false });
    expect(policy.judgeHost('registry.internal')).toEqual({ allow: true });
  });

  it('describes its ranges normalized, for the start-up log', () => {
    expect(
      new AddressPolicy({ deny: [' 10.0.0.0/8', 'fd00::1'], allow: ['10.1.0.0/16'] }).describe(),
    ).toEqual({
      deny: ['fd00::1/128', '10.0.0.0/8'],
      allow: ['10.1.0.0/16'],
    });
  });

  it.each([
    ['10.0.0.0/33', /prefix length must be 0 to 32/],
    ['fd00::/129', /prefix length must be 0 to 128/],
    ['10.0.0.0/', /prefix length/],
    ['10.0.0.0/-1', /prefix length/],
    ['10.0.0.0/8/8', /prefix length/],
    ['registry.example/32', /not an IPv4 or IPv6 CIDR range/],
    ['10.0.0/8', /not an IPv4 or IPv6 CIDR range/],
    ['', /not an IPv4 or IPv6 CIDR range/],
  ])('refuses the range %j, naming the flag', (text, message) => {
    const build = (): AddressPolicy =>
      new AddressPolicy({
        deny: [text],
        fieldNames: { deny: '--registry-deny-cidr', allow: '--registry-allow-cidr' },
      });
    expect(build).toThrow(InvalidArgumentError);
    expect(build).toThrow(/^invalid value for --registry-deny-cidr: /);
    expect(build).toThrow(message);
  });

  it(`refuses more than ${maxAddressPolicyRanges} ranges in one list`, () => {
    const many = Array.from({ length: maxAddressPolicyRanges + 1 }, (_, i) => `10.${i >> 8}.${i & 255}.0/24`);
    expect(() => new AddressPolicy({ allow: many })).toThrow(/at most 256 ranges/);
  });
});
