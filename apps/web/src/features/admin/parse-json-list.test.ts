import { describe, expect, it } from "vitest";
import { parseJsonList } from "./api";

describe("parseJsonList (the plans, packages and deployments editors)", () => {
  it("takes a JSON list of objects", () => {
    expect(parseJsonList('[{"amount": 10, "bonus": 0, "total": 10}]')).toEqual({ list: [{ amount: 10, bonus: 0, total: 10 }] });
    expect(parseJsonList("[]")).toEqual({ list: [] });
  });

  it("refuses what is not JSON, or not a list of objects, with a text saying so", () => {
    expect(parseJsonList("[{")).toMatchObject({ error: expect.stringMatching(/^Not valid JSON/) });
    for (const bad of ['{"a": 1}', "[1, 2]", "[[]]", "null"]) expect(parseJsonList(bad), bad).toEqual({ error: "Enter a JSON list of objects: [{…}, {…}]." });
  });
});
