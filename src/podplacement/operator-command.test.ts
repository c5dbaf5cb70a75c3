import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../runtime/index.js';
import { registryAddressPolicy } from './operator-command.js';

describe('registryAddressPolicy: --registry-deny-cidr / --registry-allow-cidr', () => {
  const allowed = (opts: Record<string, unknown>, inPod: boolean, address: string): boolean =>
    registryAddressPolicy(opts, inPod).judge(address).allow;

  it('denies loopback in a pod (the operator pod itself), not outside one (the dev registry lives there)', () => {
    expect(allowed({}, true, '127.0.0.1')).toBe(false);
    expect(allowed({}, true, '::1')).toBe(false);
    expect(allowed({}, false, '127.0.0.1')).toBe(true);
    // Other addresses are the admin's to list: the operator cannot learn the cluster's networks without more RBAC.
    expect(allowed({}, true, '10.128.0.5')).toBe(true);
  });

  it("adds the admin's ranges (repeated or comma-separated) to loopback, and allows exceptions", () => {
    const opts = {
      registryDenyCidr: ['10.128.0.0/14, 172.30.0.0/16', 'fd00::/8'],
      registryAllowCidr: ['172.30.12.7'],
    };
    expect(allowed(opts, true, '10.129.0.1')).toBe(false);
    expect(allowed(opts, true, '172.30.0.1')).toBe(false);
    expect(allowed(opts, true, '172.30.12.7')).toBe(true);
    expect(allowed(opts, true, 'fd00::1')).toBe(false);
    expect(allowed(opts, true, '127.0.0.1')).toBe(false);
    expect(allowed({ registryAllowCidr: ['127.0.0.0/8'] }, true, '127.0.0.1')).toBe(true);
  });

  it('refuses a malformed range at start-up, naming the flag', () => {
    expect(() => registryAddressPolicy({ registryAllowCidr: ['10.0.0.0/40'] }, false)).toThrow(
      InvalidArgumentError,
    );
    expect(() => registryAddressPolicy({ registryDenyCidr: ['quay.io'] }, false)).toThrow(
      /^invalid value for --registry-deny-cidr: "quay.io" is not an IPv4 or IPv6 CIDR range$/,
    );
  });
});
