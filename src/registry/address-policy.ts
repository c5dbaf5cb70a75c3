// Which IP addresses the registry client may dial: the one absolute address rule, applied to the address of every
// connection (an IP literal before the request, a host name's resolved addresses in the connect-time lookup), so
// images, mirrors, redirects and token realms all pass it. Pure; CIDR matching is node:net's BlockList.
// - Link-local (cloud metadata, 169.254.0.0/16, fe80::/10) and unspecified (0.0.0.0/8, ::) addresses are always
//   refused; no list can allow them.
// - Otherwise the most specific listed range decides (`deny` 10.0.0.0/8 with `allow` 10.1.2.3/32 allows that one
//   address); at equal prefix lengths `allow` wins (an allow range is an exception); an address no range lists is
//   allowed.
// A refused address is never connected to, so its ports cannot be told apart by timing or by error text.
import { BlockList, isIP } from 'node:net';
import { InvalidArgumentError } from '../runtime/light.js';
import { addressClass } from './redirect-policy.js';

/** Most ranges in one list: they are operator flags, matched one by one for every connection. */
export const maxAddressPolicyRanges = 256;

export interface AddressPolicyOptions {
  /**
   * CIDR ranges (`10.128.0.0/14`, `fd00::/8`) or single addresses never dialed, e.g. the cluster's pod, service and
   * node networks. Default: none.
   */
  readonly deny?: readonly string[];
  /**
   * Ranges dialed even inside a `deny` range of the same size or larger (an in-cluster registry's Service address
   * inside a denied service network). Default: none.
   */
  readonly allow?: readonly string[];
  /** Names the lists in errors (`--registry-deny-cidr`). Default: `deny` / `allow`. */
  readonly fieldNames?: { readonly deny: string; readonly allow: string };
}

export type AddressVerdict = { readonly allow: true } | { readonly allow: false; readonly reason: string };

interface AddressRange {
  readonly text: string;
  readonly prefix: number;
  readonly deny: boolean;
  /** Holds this one range (BlockList does not say which of several rules matched). */
  readonly list: BlockList;
}

/** Parses `address/prefix` or a lone address (a /32 or /128) into a range; throws InvalidArgumentError. */
function parseRange(text: string, deny: boolean, field: string): AddressRange {
  const slash = text.indexOf('/');
  const address = slash < 0 ? text : text.slice(0, slash);
  const version = isIP(address);
  if (version === 0)
    throw new InvalidArgumentError(field, `${JSON.stringify(text)} is not an IPv4 or IPv6 CIDR range`);
  const max = version === 4 ? 32 : 128;
  const prefixText = slash < 0 ? String(max) : text.slice(slash + 1);
  const prefix = /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
  if (!(prefix >= 0 && prefix <= max))
    throw new InvalidArgumentError(
      field,
      `${JSON.stringify(text)}: the prefix length must be 0 to ${max} for an IPv${version} range`,
    );
  const list = new BlockList();
  list.addSubnet(address, prefix, version === 4 ? 'ipv4' : 'ipv6');
  return { text: `${address}/${prefix}`, prefix, deny, list };
}

export class AddressPolicy {
  /** Admin ranges, most specific first and, at equal length, allow before deny: the first match decides. */
  private readonly ranges: readonly AddressRange[];

  constructor(options: AddressPolicyOptions = {}) {
    const fields = options.fieldNames ?? { deny: 'deny', allow: 'allow' };
    const ranges: AddressRange[] = [];
    for (const [field, texts, deny] of [
      [fields.deny, options.deny ?? [], true],
      [fields.allow, options.allow ?? [], false],
    ] as const) {
      if (texts.length > maxAddressPolicyRanges)
        throw new InvalidArgumentError(
          field,
          `at most ${maxAddressPolicyRanges} ranges, not ${texts.length}`,
        );
      for (const text of texts) ranges.push(parseRange(text.trim(), deny, field));
    }
    this.ranges = ranges.sort((a, b) => b.prefix - a.prefix || Number(a.deny) - Number(b.deny));
  }

  /** The ranges as given, normalized (`10.0.0.0/8`), for the start-up log. */
  describe(): { readonly deny: readonly string[]; readonly allow: readonly string[] } {
    return {
      deny: this.ranges.filter((r) => r.deny).map((r) => r.text),
      allow: this.ranges.filter((r) => !r.deny).map((r) => r.text),
    };
  }

  /** Whether the client may connect to `address` (an IP literal; IPv4-mapped IPv6 counts as its IPv4 address). */
  judge(address: string): AddressVerdict {
    const kind = addressClass(address);
    if (kind === 'link-local' || kind === 'unspecified')
      return { allow: false, reason: `${address} is a ${kind} address` };
    const version = isIP(address);
    if (version === 0) return { allow: true }; // a name: its addresses are judged when it is resolved
    const type = version === 4 ? 'ipv4' : 'ipv6';
    const match = this.ranges.find((r) => r.list.check(address, type));
    if (match?.deny === true)
      return { allow: false, reason: `${address} is in a range the operator's address policy denies` };
    return { allow: true };
  }

  /** judge() for a URL hostname (`[::1]` brackets allowed); host names are allowed here and judged when resolved. */
  judgeHost(hostname: string): AddressVerdict {
    const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
    return isIP(bare) === 0 ? { allow: true } : this.judge(bare);
  }
}

/** Loopback, IPv4 and IPv6: in a pod, the pod's own listeners (see the operator's --registry-deny-cidr default). */
export const loopbackRanges: readonly string[] = ['127.0.0.0/8', '::1/128'];

/** Only the built-in rule (no link-local or unspecified address): the default of every registry client. */
export const defaultAddressPolicy = new AddressPolicy();
