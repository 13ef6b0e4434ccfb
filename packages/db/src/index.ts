export * from "./connection";
export * from "./ferretdb";
