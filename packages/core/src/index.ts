export * as ApiError from "./ApiError.ts"
