export * from "./clock";
export * from "./errors";
export * from "./ids";
export * from "./money";
export * from "./cancellation";
export * from "./validation";
export * from "./nul-bytes";
export * from "./characters";
