import { lookup as dnsLookup } from 'node:dns/promises';
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import { type Agent, request as httpsRequest } from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * The guard for every request the server makes to a URL a client gave (push endpoints, later
 * webhooks): https only, to hosts whose every address is public, and the connection goes to the
 * very address that was checked, so a host name that answers a public address to the check and a
 * private one to the connection (DNS rebinding) still reaches only the public one. TLS verifies
 * the certificate against the host name. At most `maxBytes` of the answer are read.
 */

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** All addresses of a host name (`dns.promises.lookup(host, {all: true})` by default). */
export type ResolveHost = (host: string) => Promise<ResolvedAddress[]>;

/** A URL the guard will not let the server call; `message` says why in a few words, for the caller. */
export class OutboundRefused extends Error {
  override name = 'OutboundRefused';
  /** The host name could not be resolved right now: the same URL may pass later. */
  readonly transient: boolean;
  constructor(message: string, options: { transient?: boolean } = {}) {
    super(message);
    this.transient = options.transient ?? false;
  }
}

export interface OutboundTarget {
  url: URL;
  /** The URL's host without IPv6 brackets. */
  host: string;
  /** The checked address the request connects to (absent for an allow-listed name checked without DNS). */
  address?: ResolvedAddress;
}

export interface OutboundRequestOptions {
  method?: string;
  headers?: OutgoingHttpHeaders;
  body?: string | Buffer;
  /** The whole exchange, connect included (default 10 s). */
  timeoutMs?: number;
  /** At most this much of the answer's body is read (default 4 KiB); the rest is dropped with the connection. */
  maxBytes?: number;
  /** An HTTPS agent, e.g. one trusting a private CA (tests). */
  agent?: Agent;
}

export interface OutboundResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The answer was longer than `maxBytes`. */
  truncated: boolean;
}

export interface OutboundGuard {
  /** Subscribe-time check of a URL: throws OutboundRefused with the reason. An allow-listed name is not resolved. */
  check(url: string): Promise<OutboundTarget>;
  /** Checks the URL again on fresh DNS answers, then sends one request to exactly the checked address. */
  request(url: string, options?: OutboundRequestOptions): Promise<OutboundResponse>;
}

export interface OutboundGuardOptions {
  /** Hosts or CIDRs that may be reached although they are not public (`OUTBOUND_ALLOW_HOSTS`; tests). */
  allow?: readonly string[];
  resolve?: ResolveHost;
  /** getaddrinfo has no timeout of its own. */
  resolveTimeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_BYTES = 4096;

// Special-purpose ranges (IANA IPv4/IPv6 special-purpose registries): none is a place a
// client-given URL may lead. The first matching name is the one reported.
const V4_RANGES: [name: string, network: string, prefix: number][] = [
  ['"this network"', '0.0.0.0', 8],
  ['private', '10.0.0.0', 8],
  ['shared (CGNAT)', '100.64.0.0', 10],
  ['loopback', '127.0.0.0', 8],
  ['link-local', '169.254.0.0', 16],
  ['private', '172.16.0.0', 12],
  ['IETF protocol', '192.0.0.0', 24],
  ['documentation', '192.0.2.0', 24],
  ['6to4 relay', '192.88.99.0', 24],
  ['private', '192.168.0.0', 16],
  ['benchmarking', '198.18.0.0', 15],
  ['documentation', '198.51.100.0', 24],
  ['documentation', '203.0.113.0', 24],
  ['multicast', '224.0.0.0', 4],
  ['broadcast', '255.255.255.255', 32],
  ['reserved', '240.0.0.0', 4],
];
/** IPv6 forms that carry an IPv4 address in their last 32 bits: mapped, compatible, NAT64, SIIT. */
const V4_CARRIERS: [prefix: string, name: string][] = [
  ['::ffff:', 'IPv4-mapped'],
  ['::', 'IPv4-compatible'],
  ['64:ff9b::', 'NAT64'],
  ['::ffff:0:', 'IPv4-translated'],
];
const V6_RANGES: [name: string, network: string, prefix: number][] = [
  ['unspecified', '::', 128],
  ['loopback', '::1', 128],
  ['local-use NAT64', '64:ff9b:1::', 48],
  ['discard-only', '100::', 64],
  ['documentation', '2001:db8::', 32],
  ['IETF protocol', '2001::', 23],
  ['6to4', '2002::', 16],
  ['documentation', '3fff::', 20],
  ['SRv6', '5f00::', 16],
  ['unique-local', 'fc00::', 7],
  ['link-local', 'fe80::', 10],
  ['site-local', 'fec0::', 10],
  ['multicast', 'ff00::', 8],
];

const refusedLists: [name: string, list: BlockList][] = buildRefusedLists();
const carriers = new BlockList();
for (const [prefix] of V4_CARRIERS) carriers.addSubnet(`${prefix}0.0.0.0`, 96, 'ipv6');
const globalUnicast = new BlockList();
globalUnicast.addSubnet('2000::', 3, 'ipv6');

function buildRefusedLists(): [string, BlockList][] {
  const lists = new Map<string, BlockList>();
  const list = (name: string) => {
    const found = lists.get(name) ?? new BlockList();
    lists.set(name, found);
    return found;
  };
  // IPv6 specials first: `::` and `::1` lie inside the IPv4-compatible block too.
  for (const [name, network, prefix] of V6_RANGES) list(name).addSubnet(network, prefix, 'ipv6');
  for (const [name, network, prefix] of V4_RANGES) {
    list(name).addSubnet(network, prefix, 'ipv4');
    for (const [carrier, form] of V4_CARRIERS) {
      list(`${name} (${form})`).addSubnet(`${carrier}${network}`, 96 + prefix, 'ipv6');
    }
  }
  return [...lists];
}

/** The kind of non-public range `address` lies in, or undefined when it is a public address. */
export function refusedRange(address: string): string | undefined {
  const bare = address.replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 0) return 'invalid';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const [name, list] of refusedLists) if (list.check(bare, type)) return name;
  // Outside 2000::/3 nothing is global unicast today, except a public IPv4 address carried in IPv6.
  if (family === 6 && !globalUnicast.check(bare, 'ipv6') && !carriers.check(bare, 'ipv6')) return 'reserved';
  return undefined;
}

export interface AllowList {
  hosts: Set<string>;
  addresses: BlockList;
}

/** `OUTBOUND_ALLOW_HOSTS`: comma-separated host names, addresses and CIDRs; throws on a malformed entry. */
export function parseAllowList(entries: readonly string[] | string | undefined): AllowList {
  const raw = typeof entries === 'string' ? entries.split(',') : (entries ?? []);
  const allow: AllowList = { hosts: new Set(), addresses: new BlockList() };
  for (const entry of raw.map((e) => e.trim().toLowerCase()).filter(Boolean)) {
    const [network, prefixText, extra] = entry.replace(/^\[|\]$/g, '').split('/');
    const family = isIP(network);
    const type = family === 4 ? 'ipv4' : 'ipv6';
    const prefix = prefixText === undefined ? (family === 4 ? 32 : 128) : Number(prefixText);
    if (family !== 0 && extra === undefined && Number.isInteger(prefix) && prefix >= 0) {
      if (prefix > (family === 4 ? 32 : 128)) throw new Error(`"${entry}" has a prefix too long`);
      allow.addresses.addSubnet(network, prefix, type);
    } else if (/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$/.test(entry)) {
      allow.hosts.add(entry.replace(/\.$/, ''));
    } else {
      throw new Error(`"${entry}" is neither a host name nor an address or CIDR`);
    }
  }
  return allow;
}

const systemResolve: ResolveHost = async (host) =>
  (await dnsLookup(host, { all: true, verbatim: true })).map(({ address, family }) => ({
    address,
    family: family === 6 ? 6 : 4,
  }));

export function createOutboundGuard(options: OutboundGuardOptions = {}): OutboundGuard {
  const allow = parseAllowList(options.allow);
  const resolve = options.resolve ?? systemResolve;
  const resolveTimeoutMs = options.resolveTimeoutMs ?? 5000;

  const allowedAddress = ({ address, family }: ResolvedAddress) =>
    allow.addresses.check(address.replace(/%.*$/, ''), family === 4 ? 'ipv4' : 'ipv6');

  async function resolveAll(host: string): Promise<ResolvedAddress[]> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(Object.assign(new Error('timeout'), { code: 'ETIMEOUT' })),
        resolveTimeoutMs,
      );
    });
    try {
      const addresses = await Promise.race([resolve(host), timeout]);
      if (addresses.length === 0) throw new OutboundRefused(`${host} does not resolve`);
      return addresses;
    } catch (error) {
      if (error instanceof OutboundRefused) throw error;
      const code = (error as { code?: string }).code;
      if (code === 'ENOTFOUND' || code === 'ENODATA') throw new OutboundRefused(`${host} does not resolve`);
      throw new OutboundRefused(`${host} could not be resolved right now`, { transient: true });
    } finally {
      clearTimeout(timer);
    }
  }

  /** The URL's target, its addresses resolved and checked when `connect` needs one or the name is not allowed. */
  async function target(raw: string, connect: boolean): Promise<OutboundTarget> {
    const url = parseUrl(raw);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const literal = isIP(host);
    if (literal !== 0) {
      const address: ResolvedAddress = { address: host, family: literal === 6 ? 6 : 4 };
      const range = allowedAddress(address) ? undefined : refusedRange(host);
      if (range) throw new OutboundRefused(`${host} is a ${range} address`);
      return { url, host, address };
    }
    const allowedName = allow.hosts.has(host.replace(/\.$/, ''));
    if (allowedName && !connect) return { url, host };
    const addresses = await resolveAll(host);
    if (!allowedName) {
      // Every answer must be public: the connection could otherwise be steered to the other ones.
      for (const address of addresses) {
        const range = allowedAddress(address) ? undefined : refusedRange(address.address);
        if (range) throw new OutboundRefused(`${host} resolves to a ${range} address`);
      }
    }
    return { url, host, address: addresses[0] };
  }

  return {
    check: (url) => target(url, false),
    async request(url, requestOptions = {}) {
      const checked = await target(url, true);
      return send(checked, requestOptions);
    },
  };
}

function parseUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundRefused('the URL is not valid');
  }
  if (url.protocol !== 'https:') throw new OutboundRefused('only https URLs are allowed');
  if (url.username || url.password) throw new OutboundRefused('the URL must not carry credentials');
  return url;
}

/** A `lookup` for the socket that answers the checked address whatever DNS says now. */
function pinned({ address, family }: ResolvedAddress): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
}

function send(target: OutboundTarget, options: OutboundRequestOptions): Promise<OutboundResponse> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const { url, host } = target;
  const address = target.address!;
  return new Promise((resolve, reject) => {
    const request = httpsRequest(
      {
        hostname: host,
        port: url.port || 443,
        path: `${url.pathname}${url.search}`,
        method: options.method ?? 'GET',
        headers: options.headers,
        agent: options.agent,
        // The certificate is checked against the name the client gave, not the address.
        servername: isIP(host) ? undefined : host.replace(/\.$/, ''),
        lookup: pinned(address),
        signal: AbortSignal.timeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS),
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const finish = (truncated: boolean) =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks).subarray(0, maxBytes),
            truncated,
          });
        response.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          size += chunk.length;
          if (size > maxBytes) {
            // Whatever else the remote has to say is not read: the connection goes with it.
            response.destroy();
            finish(true);
          }
        });
        response.on('end', () => finish(false));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(options.body);
  });
}
