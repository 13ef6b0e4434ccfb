import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { ModelDefinition } from "./catalog-schema";
import { DEFAULT_MODELS, modelVersions } from "./defaults";
import { loadConfig } from "./load";

const base = () => ({ DATA_DIR: mkdtempSync(path.join(os.tmpdir(), "gw-config-")) });

describe("loadConfig: error debug details (SPEC 7.1, CONTRACT 1)", () => {
  it("shows no debug details when NODE_ENV is unset, although it runs with development defaults", () => {
    const config = loadConfig(base());
    expect(config.nodeEnv).toBe("development");
    expect(config.errorDebug).toBe(false);
  });

  it("shows them only with NODE_ENV=development set explicitly", () => {
    expect(loadConfig({ ...base(), NODE_ENV: "development" }).errorDebug).toBe(true);
    expect(loadConfig({ ...base(), NODE_ENV: "test" }).errorDebug).toBe(false);
    expect(loadConfig({ ...base(), NODE_ENV: "production", SESSION_SECRET: "x".repeat(40) }).errorDebug).toBe(false);
  });
});

describe("loadConfig: HEAP_GROWING_PERCENT", () => {
  it("bounds heap growth to 50 % by default, takes 0 (V8 decides) to 400, and refuses anything else", () => {
    expect(loadConfig(base()).heapGrowingPercent).toBe(50);
    expect(loadConfig({ ...base(), HEAP_GROWING_PERCENT: "0" }).heapGrowingPercent).toBe(0);
    expect(loadConfig({ ...base(), HEAP_GROWING_PERCENT: "120" }).heapGrowingPercent).toBe(120);
    expect(() => loadConfig({ ...base(), HEAP_GROWING_PERCENT: "-5" })).toThrow(/HEAP_GROWING_PERCENT/);
    expect(() => loadConfig({ ...base(), HEAP_GROWING_PERCENT: "lots" })).toThrow(/HEAP_GROWING_PERCENT/);
  });
});

describe("loadConfig: numeric settings", () => {
  it("take decimal numbers, an exponent included, and refuse hexadecimal, octal and binary naming the variable", () => {
    expect(loadConfig({ ...base(), PORT: " 8080 " }).port).toBe(8080);
    expect(loadConfig({ ...base(), PORT: "3e3" }).port).toBe(3000);
    for (const value of ["0x50", "0o120", "0b1010000", "Infinity", "80 80"]) {
      expect(() => loadConfig({ ...base(), PORT: value }), value).toThrow(/PORT.*must be a decimal number|must be a decimal number.*PORT/s);
    }
  });
});

describe("loadConfig: HOST", () => {
  it("listens on every IPv4 interface by default and refuses an empty value naming the variable", () => {
    expect(loadConfig(base()).host).toBe("0.0.0.0");
    expect(loadConfig({ ...base(), HOST: "127.0.0.1" }).host).toBe("127.0.0.1");
    expect(() => loadConfig({ ...base(), HOST: " " })).toThrow(/HOST/);
  });
});

describe("loadConfig: LIMIT_<NAME>", () => {
  it("takes <points>/<seconds> and refuses 0 of either, as CONFIG_FILE does, naming the variable", () => {
    expect(loadConfig({ ...base(), LIMIT_LOGIN_IP: "20/60" }).limits.loginIp).toEqual({ points: 20, duration: 60 });
    expect(() => loadConfig({ ...base(), LIMIT_LOGIN_IP: "0/60" })).toThrow(/LIMIT_LOGIN_IP must look like <points>\/<seconds>, both at least 1/);
    expect(() => loadConfig({ ...base(), LIMIT_LOGIN_IP: "10/0" })).toThrow(/LIMIT_LOGIN_IP/);
    expect(() => loadConfig({ ...base(), LIMIT_LOGIN_IP: "ten/60" })).toThrow(/LIMIT_LOGIN_IP/);
    // a count JavaScript cannot hold exactly is refused, as CONFIG_FILE refuses it
    expect(loadConfig({ ...base(), LIMIT_LOGIN_IP: "9007199254740991/60" }).limits.loginIp.points).toBe(Number.MAX_SAFE_INTEGER);
    expect(() => loadConfig({ ...base(), LIMIT_LOGIN_IP: "99999999999999999999/60" })).toThrow("LIMIT_LOGIN_IP: the points must be at most 9007199254740991");
  });

  it("refuses a window past Node's longest timer, in LIMIT_ and in CONFIG_FILE, where the limiter forgot every count", () => {
    expect(loadConfig({ ...base(), LIMIT_LOGIN_IP: "10/2147483" }).limits.loginIp).toEqual({ points: 10, duration: 2_147_483 });
    expect(() => loadConfig({ ...base(), LIMIT_LOGIN_IP: "10/2147484" }))
      .toThrow("LIMIT_LOGIN_IP: the window must be at most 2147483 seconds (about 24 days, Node's longest timer)");
    const dir = base().DATA_DIR;
    const file = path.join(dir, "config.json");
    writeFileSync(file, JSON.stringify({ limits: { loginIp: { points: 10, duration: 3_000_000 } } }));
    expect(() => loadConfig({ DATA_DIR: dir, CONFIG_FILE: file })).toThrow(/must be at most 2147483 seconds[\s\S]*at limits\.loginIp\.duration/);
  });
});

describe("loadConfig: Stripe keys", () => {
  it("refuses a key of the wrong kind, naming the variable, and reads an empty one as unset, as before", () => {
    expect(() => loadConfig({ ...base(), STRIPE_SECRET_KEY: "pk_test_1" })).toThrow(/STRIPE_SECRET_KEY must be a secret or restricted key/);
    expect(() => loadConfig({ ...base(), STRIPE_WEBHOOK_SECRET: "sk_test_1" })).toThrow(/STRIPE_WEBHOOK_SECRET must be the endpoint's signing secret/);
    expect(() => loadConfig({ ...base(), STRIPE_PUBLISHABLE_KEY: "sk_test_1" })).toThrow(/STRIPE_PUBLISHABLE_KEY must be a publishable key/);
    // `STRIPE_SECRET_KEY=` in an env file: billing unconfigured (503), not a start that stops
    const { stripe } = loadConfig({ ...base(), STRIPE_SECRET_KEY: "", STRIPE_PUBLISHABLE_KEY: "", STRIPE_WEBHOOK_SECRET: "" });
    expect(stripe.secretKey || undefined).toBeUndefined();
    expect(stripe.webhookSecret || undefined).toBeUndefined();
    expect(loadConfig({ ...base(), STRIPE_SECRET_KEY: "rk_live_1", STRIPE_WEBHOOK_SECRET: "whsec_1" }).stripe).toMatchObject({ secretKey: "rk_live_1", webhookSecret: "whsec_1" });
  });
});

describe("loadConfig: REDIS_URL", () => {
  it("takes a redis:// or rediss:// URL and refuses anything else naming the variable", () => {
    expect(loadConfig({ ...base(), REDIS_URL: "redis://127.0.0.1:6379" }).redisUrl).toBe("redis://127.0.0.1:6379");
    expect(loadConfig({ ...base(), REDIS_URL: "rediss://user:pass@cache.example.com:6380/2" }).redisUrl).toBe("rediss://user:pass@cache.example.com:6380/2");
    expect(() => loadConfig({ ...base(), REDIS_URL: "notaurl" })).toThrow(/REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL/);
    expect(() => loadConfig({ ...base(), REDIS_URL: "http://127.0.0.1:6379" })).toThrow(/REDIS_URL/);
  });
});

describe("loadConfig: SMTP_URL", () => {
  it("takes an smtp:// or smtps:// URL and refuses anything else naming the variable", () => {
    expect(loadConfig({ ...base(), SMTP_URL: "smtps://user:pass@smtp.example.com" }).smtpUrl).toBe("smtps://user:pass@smtp.example.com");
    expect(loadConfig({ ...base(), SMTP_URL: "smtp://127.0.0.1:2525" }).smtpUrl).toBe("smtp://127.0.0.1:2525");
    expect(() => loadConfig({ ...base(), SMTP_URL: "smtp.example.com" })).toThrow(/SMTP_URL must be an smtp:\/\/ or smtps:\/\/ URL/);
    expect(() => loadConfig({ ...base(), SMTP_URL: "https://smtp.example.com" })).toThrow(/SMTP_URL/);
  });
});

describe("loadConfig: http(s) URLs", () => {
  it("takes http:// and https:// base URLs and refuses a scheme-less or other-scheme one naming the variable", () => {
    const config = loadConfig({ ...base(), TEXTA_BASE_URL: "https://api.openai.com/v1", TEXTB_BASE_URL: "http://127.0.0.1:8080" });
    expect(config.providers.textA.baseUrl).toBe("https://api.openai.com/v1");
    expect(config.providers.textB.baseUrl).toBe("http://127.0.0.1:8080");
    for (const name of ["TEXTA_BASE_URL", "TEXTB_BASE_URL", "TEXTC_BASE_URL", "IMAGEA_BASE_URL", "IMAGEB_BASE_URL", "SPEECH_BASE_URL", "MODERATION_UPSTREAM_URL", "STRIPE_API_BASE", "PUBLIC_URL", "GITHUB_API_URL", "GOOGLE_TOKEN_URL"]) {
      for (const value of ["localhost:8080", "ftp://127.0.0.1/", "not a url"]) {
        expect(() => loadConfig({ ...base(), [name]: value }), `${name}=${value}`).toThrow(`${name} must be an http:// or https:// URL`);
      }
    }
  });
});

describe("loadConfig: DATA_DIR", () => {
  it("takes a directory still to be created, and refuses a path a file is in the way of, naming the variable", () => {
    const dir = path.join(base().DATA_DIR, "a", "b");
    expect(loadConfig({ DATA_DIR: dir, SESSION_SECRET: "x".repeat(40) }).dataDir).toBe(dir);
    const file = path.join(base().DATA_DIR, "file");
    writeFileSync(file, "x");
    expect(() => loadConfig({ DATA_DIR: file, SESSION_SECRET: "x".repeat(40) })).toThrow(`DATA_DIR ${file} cannot be used as a directory: ${file} is a file`);
    expect(() => loadConfig({ DATA_DIR: path.join(file, "sub") })).toThrow(`DATA_DIR ${path.join(file, "sub")} cannot be used as a directory: ${file} is a file`);
  });
});

describe("loadConfig: image endpoint A versions (SPEC 4.2 `model`)", () => {
  /** CONFIG_FILE with the default models, imageA's entry changed by `imageA`. */
  const withImageA = (imageA: Partial<ModelDefinition> & Record<string, unknown>, others: Record<string, unknown> = {}) => {
    const env = base();
    const models = DEFAULT_MODELS.map((m) => (m.id === "imageA" ? { ...m, ...imageA } : m.id === "textA-4" ? { ...m, ...others } : m));
    const file = path.join(env.DATA_DIR, "models.json");
    writeFileSync(file, JSON.stringify({ models }));
    return { ...env, CONFIG_FILE: file };
  };
  const imageAOf = (env: Record<string, string>) => {
    const model = loadConfig(env).models.find((m) => m.id === "imageA");
    if (!model) throw new Error("imageA missing");
    return model;
  };

  it("by default version 5 sends the model's upstream name, as before versions existed", () => {
    expect([...modelVersions(imageAOf(base()))]).toEqual([["5", "imageA"]]);
    expect([...modelVersions(imageAOf(withImageA({ upstreamModel: "dall-e-3" })))]).toEqual([["5", "dall-e-3"]]);
  });

  it("takes more versions from the models config", () => {
    const model = imageAOf(withImageA({ versions: { "5": "dall-e-3", "6": "gpt-image-1", "6.1-beta": "gpt-image-1-mini" } }));
    expect(Object.fromEntries(modelVersions(model))).toEqual({ "5": "dall-e-3", "6": "gpt-image-1", "6.1-beta": "gpt-image-1-mini" });
  });

  it("refuses a bad versions map at start, naming the entry and the rule", () => {
    const load = (imageA: Record<string, unknown>, others: Record<string, unknown> = {}) => () => loadConfig(withImageA(imageA, others));
    expect(load({ versions: { "6": "gpt-image-1" } })).toThrow(/must map version "5", the one requests get by default[^]*models\[13\]\.versions/);
    expect(load({ versions: { "5": "" } })).toThrow(/the upstream model name must not be empty[^]*models\[13\]\.versions\.5/);
    expect(load({ versions: { "5": "a", "six please": "b" } })).toThrow(/a version is 1-32 letters, digits/);
    expect(load({ versions: ["dall-e-3"] })).toThrow(/models\[13\]\.versions/);
    expect(load({}, { versions: { "5": "gpt-4o" } })).toThrow(/versions are read only for the imageA model[^]*models\[0\]\.versions/);
  });
});

describe("loadConfig: API_CORS_ORIGINS", () => {
  it("allows any origin by default, none when empty, and keeps a list as the origins browsers send", () => {
    expect(loadConfig(base()).apiCorsOrigins).toBe("*");
    expect(loadConfig({ ...base(), API_CORS_ORIGINS: " * " }).apiCorsOrigins).toBe("*");
    expect(loadConfig({ ...base(), API_CORS_ORIGINS: "" }).apiCorsOrigins).toEqual([]);
    expect(loadConfig({ ...base(), API_CORS_ORIGINS: "https://App.example.com:443, http://localhost:5173/" }).apiCorsOrigins)
      .toEqual(["https://app.example.com", "http://localhost:5173"]);
  });

  it("refuses at start what is not an origin, naming the variable", () => {
    for (const bad of ["app.example.com", "https://a.example.com/path", "https://a.example.com,", "https://a.example.com, *", "ftp://a.example.com", "https://u:p@a.example.com", "null"]) {
      expect(() => loadConfig({ ...base(), API_CORS_ORIGINS: bad }), bad).toThrow(/API_CORS_ORIGINS/);
    }
  });
});

describe("loadConfig: CHECKOUT_ALLOWED_ORIGINS", () => {
  it("takes PUBLIC_URL's origin, plus the listed ones", () => {
    expect(loadConfig({ ...base(), PUBLIC_URL: "https://gw.example.com/" }).checkoutAllowedOrigins).toEqual(["https://gw.example.com"]);
    expect(loadConfig({ ...base(), PUBLIC_URL: "https://gw.example.com", CHECKOUT_ALLOWED_ORIGINS: "https://Shop.example.com, https://gw.example.com:443" }).checkoutAllowedOrigins)
      .toEqual(["https://gw.example.com", "https://shop.example.com"]);
  });

  it("refuses at start what is not an origin, naming the variable", () => {
    for (const bad of ["shop.example.com", "https://a.example.com/path", "https://a.example.com,", "*"]) {
      expect(() => loadConfig({ ...base(), CHECKOUT_ALLOWED_ORIGINS: bad }), bad).toThrow(/CHECKOUT_ALLOWED_ORIGINS/);
    }
  });
});

describe("loadConfig: TRUST_PROXY (Express `trust proxy`)", () => {
  it("takes true, false, a hop count, and a list of addresses, subnets and Express's names", () => {
    expect(loadConfig({ ...base(), TRUST_PROXY: "true" }).trustProxy).toBe(true);
    expect(loadConfig({ ...base(), TRUST_PROXY: "false" }).trustProxy).toBe(false);
    expect(loadConfig({ ...base(), TRUST_PROXY: "2" }).trustProxy).toBe(2);
    const list = "loopback, 10.0.0.0/8, 192.168.1.0/255.255.255.0, 203.0.113.7, fd00::/8, ::1";
    expect(loadConfig({ ...base(), TRUST_PROXY: list }).trustProxy).toBe(list);
  });

  it("refuses anything else at start, naming the variable (not Express's bare `invalid IP address`)", () => {
    for (const bad of ["maybe", "10.0.0.1,", "10.0.0.0/33", "300.1.1.1", "yes"]) {
      expect(() => loadConfig({ ...base(), TRUST_PROXY: bad }), bad).toThrow(/TRUST_PROXY/);
    }
  });
});

describe("loadConfig: CONFIG_FILE prices", () => {
  it("takes whole cents for a plan's price and a package's amount and bonus, and refuses a third decimal naming it", () => {
    const dir = base().DATA_DIR;
    const file = path.join(dir, "config.json");
    const load = (json: unknown) => {
      writeFileSync(file, JSON.stringify(json));
      return loadConfig({ DATA_DIR: dir, CONFIG_FILE: file });
    };
    expect(load({ creditPackages: [{ amount: 19.99, bonus: 0.01, total: 20 }] }).creditPackages).toEqual([{ amount: 19.99, bonus: 0.01, total: 20 }]);
    expect(() => load({ creditPackages: [{ amount: 9.999, bonus: 0, total: 9.999 }] })).toThrow(/must be whole cents[\s\S]*at creditPackages\[0\]\.amount/);
    expect(() => load({ creditPackages: [{ amount: 10, bonus: 0.005, total: 10.005 }] })).toThrow(/at creditPackages\[0\]\.bonus/);
    const plan = { id: "pro", name: "Pro", price: 9.999, currency: "usd", interval: "month", features: [], monthlyCreditsMicros: 0, requestsPerMinute: 60, concurrentRequests: 5 };
    expect(() => load({ plans: [plan] })).toThrow(/must be whole cents[\s\S]*at plans\[0\]\.price/);
    expect(load({ plans: [{ ...plan, price: 9.99 }] }).plans[0]?.price).toBe(9.99);
  });
});

describe("loadConfig: observability (METRICS_TOKEN, OTEL_*)", () => {
  it("has no metrics token and no tracing by default; empty values are unset", () => {
    expect(loadConfig(base()).observability).toEqual({ metricsToken: undefined, otlp: undefined });
    expect(loadConfig({ ...base(), METRICS_TOKEN: "", OTEL_EXPORTER_OTLP_ENDPOINT: "" }).observability).toEqual({ metricsToken: undefined, otlp: undefined });
  });

  it("reads the OTLP endpoint (without a trailing slash), its headers as the OpenTelemetry spec writes them, and the service name", () => {
    const config = loadConfig({
      ...base(), METRICS_TOKEN: "tok", OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/",
      OTEL_EXPORTER_OTLP_HEADERS: "Authorization=Bearer%20abc, x-tenant=a=b,broken", OTEL_SERVICE_NAME: "gw-eu",
    });
    expect(config.observability).toEqual({
      metricsToken: "tok",
      otlp: { endpoint: "http://collector:4318", headers: { Authorization: "Bearer abc", "x-tenant": "a=b" }, serviceName: "gw-eu" },
    });
    expect(loadConfig({ ...base(), OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" }).observability.otlp?.serviceName).toBe("ai-gateway");
  });

  it("refuses an endpoint that is not an http(s) URL, naming the variable", () => {
    expect(() => loadConfig({ ...base(), OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4317" })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/);
  });
});
