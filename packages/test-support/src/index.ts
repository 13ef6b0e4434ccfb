export * from "./processes";
