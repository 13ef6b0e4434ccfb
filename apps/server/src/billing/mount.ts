import type { Express } from "express";
import type { AppContext } from "../context";

export async function mountBilling(_app: Express, _ctx: AppContext): Promise<void> {}
