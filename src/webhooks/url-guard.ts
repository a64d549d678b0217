// Which addresses a webhook may reach (docs/webhooks.md, "URL rules"). Link-local/metadata and unspecified
// addresses are always refused; with blockPrivate, loopback and private ranges too. The
// same rules run on the URL at subscription time and on every resolved address at connect
// time, so a hostname that later resolves somewhere forbidden (DNS rebinding) is still refused.
import { BlockList, isIP } from 'node:net';

const always = new BlockList();
always.addSubnet('169.254.0.0', 16, 'ipv4');
always.addSubnet('0.0.0.0', 8, 'ipv4');
always.addSubnet('fe80::', 10, 'ipv6');
always.addAddress('::', 'ipv6');

const privateRanges = new BlockList();
for (const [net, prefix] of [
  ['127.0.0.0', 8],
  ['10.0.0.0', 8],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['100.64.0.0', 10],
] as const) {
  privateRanges.addSubnet(net, prefix, 'ipv4');
}
privateRanges.addAddress('::1', 'ipv6');
privateRanges.addSubnet('fc00::', 7, 'ipv6');

/** IPv4-mapped IPv6 (::ffff:a.b.c.d) is judged as the IPv4 address it carries. */
function normalize(address: string): { address: string; family: 'ipv4' | 'ipv6' } | null {
  const bare = address.replace(/^\[|\]$/g, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  if (mapped) return { address: mapped[1] as string, family: 'ipv4' };
  const v = isIP(bare);
  if (v === 4) return { address: bare, family: 'ipv4' };
  if (v === 6) return { address: bare, family: 'ipv6' };
  return null;
}

/** What kind of forbidden address this IP is, or null when it may be reached. */
function forbiddenKind(address: string, blockPrivate: boolean): string | null {
  const ip = normalize(address);
  if (!ip) return null;
  if (always.check(ip.address, ip.family)) return 'a link-local, metadata or unspecified address';
  if (blockPrivate && privateRanges.check(ip.address, ip.family)) return 'a loopback or private address';
  return null;
}

/** Why this IP may not be reached, or null when it may. */
export function addressRefusal(address: string, blockPrivate: boolean): string | null {
  const kind = forbiddenKind(address, blockPrivate);
  return kind ? `${address} is ${kind}` : null;
}

export const MAX_URL_LENGTH = 2048;

/** Checks a webhook URL as given by the user; returns the reason it is refused, or null. */
export function urlRefusal(raw: string, blockPrivate: boolean): string | null {
  if (raw.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute http or https URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an absolute http or https URL';
  if (url.username || url.password) return 'must not contain credentials';
  if (!url.hostname) return 'must name a host';
  // A trailing dot names the same host ("localhost." is localhost).
  const host = url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
  if (blockPrivate && (host === 'localhost' || host.endsWith('.localhost')))
    return 'must not point at localhost';
  const kind = forbiddenKind(host, blockPrivate);
  return kind ? `must not point at ${kind} (${host})` : null;
}
