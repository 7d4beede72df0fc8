import UVFetchCore

extension RequestOptions {
    /// The request options a warcinfo record names: those that shape what was fetched, never
    /// credentials or header values (-u, -H may carry secrets).
    var warcOptions: [String] {
        var options = ["--timeout \(timeout)", "--retries \(retries)"]
        if retries > 0 { options.append("--retry-max-wait \(retryMaxWait)") }
        if let method { options.append("-X \(method)") }
        if insecure { options.append("--insecure") }
        return options
    }
}
