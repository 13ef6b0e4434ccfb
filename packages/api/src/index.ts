export type * from "./app-context";
