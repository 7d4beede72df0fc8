/// Writes whole responses into an `OutputBuffer`: minimal but valid HTTP/1.1 heads (status line,
/// Content-Type, Content-Length, Connection when it is not the default) and their bodies.
///
/// No Date field: RFC 9110 §6.6.1 lets a server without a reliable clock leave it out, and
/// formatting one per response would cost more than the rest of the head.
enum Response {
    /// What the Connection field must say.
    enum Persistence {
        /// HTTP/1.1 keep-alive, the default: no field.
        case keepAlive
        /// An HTTP/1.0 client that asked for keep-alive: "Connection: keep-alive", without which
        /// it would expect the connection to close.
        case keepAliveForHTTP10
        /// The server closes after this response: "Connection: close".
        case close
    }

    /// The interim response to `Expect: 100-continue`.
    static let continueHead: StaticString = "HTTP/1.1 100 Continue\r\n\r\n"

    /// Appends the response to a request for `route`; with `omitsBody` (HEAD) the head is the
    /// same, Content-Length included, but no body follows.
    static func write(_ route: Route, omitsBody: Bool, persistence: Persistence, into output: OutputBuffer) {
        switch route {
        case .item(let item):
            writeHead(status: 200, bodyLength: ItemBody.length(item), persistence: persistence, into: output)
            if !omitsBody { ItemBody.write(item, into: output) }
        case .status(let code) where code == 204 || code == 304:
            // RFC 9110 §8.6: no Content-Length in a 204; a 304 has no body to measure.
            writeHead(status: code, bodyLength: nil, persistence: persistence, into: output)
        case .status(let code):
            writeHead(status: code, bodyLength: 11, persistence: persistence, into: output)
            if !omitsBody {
                output.append("status ")
                output.append(decimal: code)
                output.append("\n")
            }
        case .notFound:
            writeText(status: 404, "not found\n", omitsBody: omitsBody, persistence: persistence, into: output)
        }
    }

    /// Appends the answer to a request that could not be parsed (400) or whose head was too
    /// large (431); the connection then closes.
    static func writeRefusal(status: Int, into output: OutputBuffer) {
        let body: StaticString = status == 431 ? "request header fields too large\n" : "bad request\n"
        writeText(status: status, body, omitsBody: false, persistence: .close, into: output)
    }

    private static func writeText(status: Int, _ body: StaticString, omitsBody: Bool, persistence: Persistence,
                                  into output: OutputBuffer) {
        writeHead(status: status, bodyLength: body.utf8CodeUnitCount, persistence: persistence, into: output)
        if !omitsBody { output.append(body) }
    }

    /// The status line and fields, up to and including the empty line.
    private static func writeHead(status: Int, bodyLength: Int?, persistence: Persistence, into output: OutputBuffer) {
        output.append("HTTP/1.1 ")
        output.append(decimal: status)
        output.append(" ")
        output.append(reason(status))
        output.append("\r\nContent-Type: text/plain\r\n")
        if let bodyLength {
            output.append("Content-Length: ")
            output.append(decimal: bodyLength)
            output.append("\r\n")
        }
        switch persistence {
        case .keepAlive: break
        case .keepAliveForHTTP10: output.append("Connection: keep-alive\r\n")
        case .close: output.append("Connection: close\r\n")
        }
        output.append("\r\n")
    }

    /// The reason phrase: RFC 9110's for the usual codes, the class's name for the others (a
    /// reason phrase is free text, RFC 9112 §4).
    static func reason(_ status: Int) -> StaticString {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 410: "Gone"
        case 418: "I'm a teapot"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 200..<300: "Success"
        case 300..<400: "Redirection"
        case 400..<500: "Client Error"
        default: "Server Error"
        }
    }
}
