import { fireEvent, render, screen } from "@testing-library/react";
import { useState } from "react";
import { describe, expect, it } from "vitest";
import { checkPassword, passwordAcceptable } from "./password-rules";
import { PasswordRulesList } from "./password-rules-list";

const failing = (pw: string) => checkPassword(pw).filter((r) => !r.ok).map((r) => r.id);

describe("checkPassword", () => {
  it("reports every SPEC 5 rule for an empty password", () => {
    expect(failing("")).toEqual(["length", "lower", "upper", "digit", "special", "common"]);
  });

  it("names exactly the rules still missing", () => {
    expect(failing("abcdefgh")).toEqual(["upper", "digit", "special"]);
    expect(failing("Abcdefg1")).toEqual(["special"]);
    expect(failing("Ab1!")).toEqual(["length"]);
  });

  it("accepts a password meeting every rule, unicode letters included", () => {
    expect(passwordAcceptable("Correct-Horse-7")).toBe(true);
    expect(passwordAcceptable("Ünïcode-Päss9")).toBe(true);
  });

  it("rejects common passwords even when they meet the character rules", () => {
    expect(failing("Password1!")).toEqual(["common"]);
    expect(passwordAcceptable("P@ssw0rd")).toBe(false);
  });
});

function Harness() {
  const [pw, setPw] = useState("");
  return (
    <>
      <label>Password<input value={pw} onChange={(e) => setPw(e.target.value)} /></label>
      <PasswordRulesList password={pw} id="rules" />
    </>
  );
}

describe("PasswordRulesList", () => {
  it("updates the checklist live as the user types", () => {
    render(<Harness />);
    const met = () => screen.getAllByRole("listitem").filter((li) => li.dataset.ok === "true").length;
    expect(met()).toBe(0);
    fireEvent.change(screen.getByLabelText("Password"), { target: { value: "abc" } });
    expect(met()).toBe(2); // lower-case, not common
    fireEvent.change(screen.getByLabelText("Password"), { target: { value: "Abcdef12!" } });
    expect(met()).toBe(6);
    expect(screen.getByText(/At least 8 characters/).textContent).toContain("(met)");
  });
});
