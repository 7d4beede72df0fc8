import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import HTTPTypes

/// Validates, then returns an `XMLParser` over the body (not yet run), like
/// AFXMLParserResponseSerializer. Accepts application/xml and text/xml.
///
/// As with JSON, a rejected status still yields the parser, carried by the error.
public struct XMLParserResponseSerializer: ValidatingResponseSerializer {
    /// The validation rules; the content types default to the XML ones.
    public var validation: HTTPResponseSerializer

    /// Accepts application/xml and text/xml.
    public init() {
        validation = HTTPResponseSerializer()
        validation.acceptableContentTypes = ["application/xml", "text/xml"]
    }

    /// True: it parses the body, on the worker pool.
    public var needsWorkerThread: Bool { true }

    /// Validates, then wraps the body in a parser.
    public func responseObject(for response: HTTPResponse, data: Data?) throws -> Any? {
        let failure = try validation.validationErrorAllowingParse(for: response, data: data)
        return try HTTPResponseSerializer.deliver(XMLParser(data: data ?? Data()), despite: failure)
    }
}
