import { describe, expect, it } from "vitest";
import { z } from "zod";
import { appErrorFromZod } from "./errors";

function errorFor(schema: z.ZodType, input: unknown) {
  const result = schema.safeParse(input);
  if (result.success) throw new Error("expected a validation failure");
  return appErrorFromZod(result.error, input);
}

describe("appErrorFromZod", () => {
  it("reports an absent enum field as missing_required_parameter naming it", () => {
    const err = errorFor(z.object({ type: z.enum(["credits", "subscription"]) }), {});
    expect(err.code).toBe("missing_required_parameter");
    expect(err.message).toContain("'type'");
  });

  it("reports absent literal and union fields as missing too", () => {
    expect(errorFor(z.object({ kind: z.literal("a") }), {}).code).toBe("missing_required_parameter");
    expect(errorFor(z.object({ input: z.union([z.string(), z.array(z.string())]) }), {}).code).toBe("missing_required_parameter");
  });

  it("reports a present but wrong enum value as invalid_parameter listing the options", () => {
    const err = errorFor(z.object({ type: z.enum(["credits", "subscription"]) }), { type: "bogus" });
    expect(err.code).toBe("invalid_parameter");
    expect(err.message).toBe(`Invalid parameter 'type': must be one of "credits", "subscription".`);
  });

  it("words integer and custom regex rules for people", () => {
    expect(errorFor(z.object({ n: z.number().int() }), { n: 1.5 }).message).toBe("Invalid parameter 'n': must be an integer.");
    const named = z.object({ name: z.string().regex(/^[a-z]*$/, "must be lower case") });
    expect(errorFor(named, { name: "A" }).message).toBe("Invalid parameter 'name': must be lower case.");
    expect(errorFor(z.object({ name: z.string().regex(/^[a-z]*$/) }), { name: "A" }).message).toBe("Invalid parameter 'name': has an invalid format.");
  });
});
