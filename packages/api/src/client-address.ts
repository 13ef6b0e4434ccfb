import type { Request } from "express";
import ipaddr from "ipaddr.js";

/**
 * The client address per-IP limits count against. req.ip already honours TRUST_PROXY (Express `trust proxy`), as
 * CONTRACT 7 asks. An IPv6 client is counted by its /64 network: one subscriber or host is routinely given a whole
 * /64, so counting each address alone would let it take a fresh limit per request. An IPv4 address written as IPv6
 * (`::ffff:192.0.2.1`, a dual-stack socket) is the IPv4 address it stands for.
 */
export function clientLimitAddress(req: Request): string {
  const ip = req.ip ?? req.socket.remoteAddress ?? "unknown";
  if (!ipaddr.IPv6.isValid(ip)) return ip;
  const v6 = ipaddr.IPv6.parse(ip);
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  const network = v6.parts.slice(0, 4).map((part) => part.toString(16)).join(":");
  return `${network}::/64`;
}
