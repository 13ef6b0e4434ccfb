import type { Express } from "express";
import type { AppContext } from "../context";

export async function mountApi(_app: Express, _ctx: AppContext): Promise<void> {}
