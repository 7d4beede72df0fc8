// HTTPTypes is part of this library's API (`HTTPRequest.Method`, `HTTPResponse`, `HTTPFields`,
// `HTTPField.Name`): re-exported, so `import UVNetworking` is all a user writes.
@_exported import HTTPTypes
