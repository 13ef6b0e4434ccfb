import { BlockList, isIP } from "node:net";
import { AppError, type LimitReset } from "@gw/shared";

// CONTRACT 10: the optional controls an API key carries, and the checks that need no database (expiry, IP, model).

export interface KeyRateLimit {
  requestsPerMinute: number;
  concurrentRequests: number;
}

export interface KeyControls {
  /** micro-dollars per period; null: no limit */
  limitMicros: number | null;
  limitReset: LimitReset;
  /** null: every model */
  allowedModels: string[] | null;
  rateLimit: KeyRateLimit | null;
  expiresAt: Date | null;
  /** IPs or CIDRs; null: any address */
  allowedIps: string[] | null;
}

export const NO_CONTROLS: KeyControls = {
  limitMicros: null, limitReset: "never", allowedModels: null, rateLimit: null, expiresAt: null, allowedIps: null,
};

/** A key's controls prepared once per cache load, so that each request's checks are lookups. */
export interface KeyAccess {
  keyId: string;
  controls: KeyControls;
  ips: BlockList | null;
  models: ReadonlySet<string> | null;
}

/** `1.2.3.4`, `2001:db8::1`, `10.0.0.0/8` or `2001:db8::/32`: the address and prefix, or null when malformed. */
export function parseIpOrCidr(value: string): { address: string; family: "ipv4" | "ipv6"; prefix: number } | null {
  const [address = "", prefixText, extra] = value.split("/");
  if (extra !== undefined) return null;
  // an IPv6 zone (`fe80::1%eth0`) names an interface of the server, not a client address
  const version = address.includes("%") ? 0 : isIP(address);
  if (version === 0) return null;
  const max = version === 4 ? 32 : 128;
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return null;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (prefix > max) return null;
  return { address, family: version === 4 ? "ipv4" : "ipv6", prefix };
}

export function compileAccess(keyId: string, controls: KeyControls): KeyAccess {
  let ips: BlockList | null = null;
  if (controls.allowedIps) {
    ips = new BlockList();
    for (const entry of controls.allowedIps) {
      const parsed = parseIpOrCidr(entry);
      if (parsed) ips.addSubnet(parsed.address, parsed.prefix, parsed.family);
    }
  }
  return { keyId, controls, ips, models: controls.allowedModels ? new Set(controls.allowedModels) : null };
}

/** An IPv4 address written as IPv6 (`::ffff:192.0.2.1`, a dual-stack socket) is the IPv4 address it stands for. */
function plainAddress(ip: string): { address: string; family: "ipv4" | "ipv6" } | null {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  const address = mapped?.[1] ?? ip;
  const version = isIP(address);
  if (version === 0) return null;
  return { address, family: version === 4 ? "ipv4" : "ipv6" };
}

/**
 * The checks of CONTRACT 10 that come before the model is known, in its order: expired (401 key_expired), then the
 * client address (403 ip_not_allowed). `clientIp` is the request's address as the per-IP limits see it (req.ip).
 */
export function checkKeyAccess(access: KeyAccess, nowMs: number, clientIp: string | undefined): void {
  const { expiresAt } = access.controls;
  if (expiresAt && expiresAt.getTime() <= nowMs) {
    throw new AppError("key_expired", `This API key expired at ${expiresAt.toISOString()}.`);
  }
  if (access.ips) {
    const client = clientIp === undefined ? null : plainAddress(clientIp);
    if (!client || !access.ips.check(client.address, client.family)) {
      throw new AppError("ip_not_allowed", `This API key may not be used from ${clientIp ?? "this address"}.`);
    }
  }
}

/** 403 model_not_allowed naming the model, when the key's allowed_models leave it out. */
export function checkKeyModel(access: KeyAccess, modelId: string): void {
  if (access.models && !access.models.has(modelId)) {
    throw new AppError("model_not_allowed", `This API key may not use the model '${modelId.slice(0, 100)}'.`);
  }
}
