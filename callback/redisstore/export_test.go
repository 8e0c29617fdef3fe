package redisstore

// ClaimLua is the claim script's source, for tests that send it as the
// client would send it again.
const ClaimLua = claimLua
