/// Header fields checked and encoded once, to be written into many requests: a session's
/// default fields (`httpAdditionalHeaders`, Accept-Encoding). `RequestEncoder` copies a field's
/// bytes instead of checking and formatting it again for every request.
package struct EncodedFields: Sendable {
    /// One field of the list.
    package struct Field: Sendable {
        package let name: String
        /// Where `name: value\r\n` lies in `bytes` (empty when the field cannot be sent).
        package let range: Range<Int>
        /// Why the field cannot be sent, found once; thrown when a request would send it.
        package let error: RequestEncoder.EncodeError?
        /// Host, Content-Length or Transfer-Encoding: the encoder's own, never written from here.
        package let isReserved: Bool
    }

    /// The fields in the order they are sent.
    package let fields: [Field]
    /// Every sendable field's `name: value\r\n`, in order.
    package let bytes: [UInt8]
    /// Every field can be sent and none is reserved: a request that names none of them gets
    /// `bytes` whole.
    package let isPlain: Bool

    /// No fields.
    package static let empty = EncodedFields([])

    /// Checks and encodes `list`, in order.
    package init(_ list: [(name: String, value: String)]) {
        var fields: [Field] = []
        fields.reserveCapacity(list.count)
        var bytes: [UInt8] = []
        var isPlain = true
        for field in list {
            let isReserved = RequestEncoder.sameName(field.name, "Host") || RequestFraming.isFramingField(field.name)
            var error: RequestEncoder.EncodeError?
            if field.name.isEmpty || !RequestEncoder.all(field.name, RequestEncoder.isTokenByte) {
                error = .invalidName(field.name)
            } else if !RequestEncoder.all(field.value, RequestEncoder.isValueByte) {
                error = .invalidValue(name: field.name)
            }
            let start = bytes.count
            if error == nil && !isReserved { RequestEncoder.appendField(&bytes, field.name, field.value) }
            fields.append(Field(name: field.name, range: start..<bytes.count, error: error, isReserved: isReserved))
            isPlain = isPlain && error == nil && !isReserved
        }
        self.fields = fields
        self.bytes = bytes
        self.isPlain = isPlain
    }

    /// Whether the list has no field.
    package var isEmpty: Bool { fields.isEmpty }

    /// Whether a field of the list is named `name` (ASCII case-insensitively).
    package func contains(name: String) -> Bool {
        fields.contains { RequestEncoder.sameName($0.name, name) }
    }
}
