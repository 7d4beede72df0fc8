// Fuzzes the proxy environment (Sources/UVNetworking/Transport/Proxy/ProxyConfiguration.swift):
// ProxyConfiguration.environment from fuzzed variables, then proxy(forScheme:host:).
//
// Input: 2 option bytes, then LF-separated lines: one value per variable present, in the order
// below, then the request host (any bytes; invalid UTF-8 becomes U+FFFD).
//   byte 0  which variables are set, bits 0-7: http_proxy HTTP_PROXY https_proxy HTTPS_PROXY
//           all_proxy ALL_PROXY no_proxy NO_PROXY
//   byte 1  bit 0: the request is https (else http)
//
// Invariants:
// - The proxy comes only from the variables curl reads for the scheme: http_proxy (never
//   HTTP_PROXY, which a CGI request can set), https_proxy or HTTPS_PROXY, then all_proxy or
//   ALL_PROXY; its host and port are that value's (port 1080 when it has none). Variables that
//   are not read change nothing.
// - A host that no_proxy lists is never proxied (curl's rules, computed here on their own: "*";
//   a name matching itself and its subdomains; case-insensitive; a leading dot in the entry and a
//   trailing dot in either ignored; IPv6 entries in brackets). Loopback hosts are never proxied.
// - A host that shares nothing with any entry (and is not loopback) is proxied when there is a
//   proxy with a host.
// - Metamorphic: the host's ASCII case, and a leading dot added to every entry, change nothing;
//   a listed host's subdomains are not proxied either.

import Foundation
import FuzzSupport
@testable import UVNetworking

let names = ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"]

/// The first of `keys` set to more than blanks, trimmed.
func firstValue(_ variables: [String: String], _ keys: String...) -> String? {
    keys.lazy.compactMap { variables[$0]?.trimmingCharacters(in: .whitespaces) }.first { !$0.isEmpty }
}

/// `text` without one leading `prefix` and one trailing `suffix` character.
func stripping(_ text: String, leading: Character? = nil, trailing: Character? = nil) -> String {
    var text = Substring(text)
    if let leading, text.first == leading { text = text.dropFirst() }
    if let trailing, text.last == trailing { text = text.dropLast() }
    return String(text)
}

/// curl's no_proxy match, on its own: see the header.
func isListed(_ host: String, entries: [String]) -> Bool {
    let name = stripping(host.lowercased(), trailing: ".")
    return entries.contains { entry in
        if entry == "*" { return true }
        var domain = entry.lowercased()
        if domain.hasPrefix("[") && domain.hasSuffix("]") && domain.count >= 2 { domain = String(domain.dropFirst().dropLast()) }
        domain = stripping(stripping(domain, trailing: "."), leading: ".")
        return !domain.isEmpty && (name == domain || name.hasSuffix("." + domain))
    }
}

func isLoopbackLike(_ host: String) -> Bool {
    let lowered = host.lowercased()
    return lowered.contains("localhost") || lowered.hasPrefix("127.") || lowered == "::1"
}

runFuzzer { bytes in
    var input = FuzzInput(bytes)
    let present = input.byte()
    let scheme = input.byte() & 1 != 0 ? "https" : "http"
    var lines = String(decoding: input.remaining(), as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let host = lines.popLast() ?? ""
    var variables: [String: String] = [:]
    for (bit, name) in names.enumerated() where present & (1 << bit) != 0 {
        variables[name] = lines.isEmpty ? "" : lines.removeFirst()
    }

    let configuration = ProxyConfiguration.environment(variables)
    var unread = variables
    unread["HTTP_PROXY"] = "http://cgi-header.example:1"
    unread["ftp_proxy"] = "http://ftp.example:2"
    unread["FUZZ"] = "x"
    fuzzCheck(ProxyConfiguration.environment(unread) == configuration, "a variable curl does not read changed the configuration")

    let endpoint = configuration.proxy(forScheme: scheme, host: host)
    let entries = (firstValue(variables, "no_proxy", "NO_PROXY") ?? "").split(separator: ",")
        .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    let chosen = scheme == "https" ? firstValue(variables, "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY")
                                   : firstValue(variables, "http_proxy", "all_proxy", "ALL_PROXY")
    let chosenURL = chosen.flatMap { URL(string: $0.contains("://") ? $0 : "http://" + $0) }

    if let endpoint {
        fuzzCheck(chosenURL != nil, "a proxy \(endpoint) from none of the variables read for \(scheme)")
        if let chosenURL {
            let expectedHost = chosenURL.host.map { $0.hasPrefix("[") ? String($0.dropFirst().dropLast()) : $0 }
            fuzzCheck(endpoint.host == expectedHost && endpoint.port == (chosenURL.port ?? 1080),
                      "the proxy \(endpoint.host):\(endpoint.port) is not \(chosenURL)'s")
        }
        fuzzCheck(!isListed(host, entries: entries), "\(host.debugDescription) is in no_proxy \(entries) but goes through \(endpoint.host)")
        fuzzCheck(!["localhost", "::1", "127.0.0.1"].contains(host.lowercased()), "the loopback host \(host) was proxied")
        fuzzCheck(endpoint.host.utf8.first.map { $0 != UInt8(ascii: "[") } ?? true, "a proxy host kept its brackets")
    } else if let chosenURL, let proxyHost = chosenURL.host, !proxyHost.isEmpty, !isLoopbackLike(host) {
        let lowered = host.lowercased()
        let related = entries.contains { entry in
            let bare = entry.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: ".[]"))
            // On the bytes: Foundation's String.contains(String) traps on some texts (a U+FFFD then
            // NULs; regressions/proxy-env/foundation-contains-trap).
            return entry == "*" || bare.isEmpty || lowered.utf8.firstRange(of: bare.utf8) != nil
        }
        fuzzCheck(related, "\(host.debugDescription) shares nothing with no_proxy \(entries), yet \(scheme) goes direct past \(chosenURL)")
    }

    // Metamorphic relations.
    if host.utf8.allSatisfy({ $0 < 0x80 }) {
        let flipped = configuration.proxy(forScheme: scheme, host: host.uppercased())
        fuzzCheck(flipped == endpoint, "the case of \(host.debugDescription) changed the proxy")
    }
    var dotted = configuration
    dotted.noProxy = configuration.noProxy.map { $0 == "*" || $0.hasPrefix(".") || $0.hasPrefix("[") ? $0 : "." + $0 }
    fuzzCheck(dotted.proxy(forScheme: scheme, host: host) == endpoint, "a leading dot on the no_proxy entries changed the proxy for \(host.debugDescription)")
    if endpoint == nil, isListed(host, entries: entries), !host.isEmpty {
        fuzzCheck(configuration.proxy(forScheme: scheme, host: "sub." + host) == nil, "sub.\(host) is proxied though \(host) is listed")
    }
}
