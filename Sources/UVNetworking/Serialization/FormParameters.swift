import Foundation

/// Turns an `Encodable` value into the parameters `QueryString` flattens (and the property list
/// serializer writes): the rule for `Encodable` parameters of the verbs in a query string or a
/// form body.
///
/// The value is encoded as its `encode(to:)` says, with its coding keys: a keyed container
/// becomes a dictionary (so `key[sub]=…` when nested), an unkeyed one an array (`key[]=…` per
/// element; a `Set`'s elements sorted under the key itself, as `QueryString` writes a set),
/// `encodeNil` a bare `key`, a property left out (`encodeIfPresent` of nil, as the
/// synthesized conformance does) nothing. Values are written as `QueryString` writes them: a
/// `Bool` is "1" or "0", a number its Swift description. A `Date` is an ISO 8601 string (UTC,
/// whole seconds), a `URL` its absolute string, `Data` its base64 text, a `Decimal` its
/// description. So a dictionary literal gives the same query string whichever overload of a verb
/// takes it, but for a `Date` or `Data` value, which the `Any?` forms send as its description.
enum FormParameters {
    /// The dictionary, array or value `value` encodes to.
    static func object<T: Encodable>(from value: T) throws -> Any {
        let root = Node()
        try encode(value, into: root, codingPath: [])
        return root.object
    }

    /// Encodes `value` into `node`; the types with a text of their own are leaves.
    fileprivate static func encode<T: Encodable>(_ value: T, into node: Node, codingPath: [any CodingKey]) throws {
        switch value {
        case let date as Date: node.kind = .leaf(date.formatted(.iso8601))
        case let url as URL: node.kind = .leaf(url.absoluteString)
        case let data as Data: node.kind = .leaf(data.base64EncodedString())
        case let decimal as Decimal: node.kind = .leaf(decimal.description)
        case is any UnorderedParameters:
            // QueryString writes a set's elements under the key itself, sorted: not as an array.
            try value.encode(to: NodeEncoder(node: node, codingPath: codingPath))
            if case .unkeyed(let children) = node.kind { node.kind = .set(children) }
        default: try value.encode(to: NodeEncoder(node: node, codingPath: codingPath))
        }
    }
}

/// A `Set`, whose elements have no order: flattened as `QueryString` flattens a set.
private protocol UnorderedParameters {}
extension Set: UnorderedParameters {}

/// One value being encoded; containers hold their children's nodes until the end.
private final class Node {
    enum Kind {
        case empty
        case leaf(Any)
        case keyed([String: Node])
        case unkeyed([Node])
        /// A `Set`'s elements: written as QueryString writes a set when they are all hashable.
        case set([Node])
    }
    var kind = Kind.empty

    /// What QueryString reads: `[String: Any]`, `[Any]`, a value, or NSNull.
    var object: Any {
        switch kind {
        case .empty: return [String: Any]()
        case .leaf(let value): return value
        case .keyed(let children): return children.mapValues { $0.object }
        case .unkeyed(let children): return children.map { $0.object }
        case .set(let children):
            let elements = children.map { $0.object }
            let hashable = elements.compactMap { $0 as? AnyHashable }
            return hashable.count == elements.count ? Set(hashable) : elements
        }
    }

    /// A new child under `key`, made a keyed container if the node was not one yet.
    func child(forKey key: String) -> Node {
        var children: [String: Node] = [:]
        if case .keyed(let existing) = kind { children = existing }
        let child = Node()
        children[key] = child
        kind = .keyed(children)
        return child
    }

    /// A new element appended, made an unkeyed container if the node was not one yet.
    func appendChild() -> Node {
        var children: [Node] = []
        if case .unkeyed(let existing) = kind { children = existing }
        let child = Node()
        children.append(child)
        kind = .unkeyed(children)
        return child
    }

    var count: Int {
        if case .unkeyed(let children) = kind { return children.count }
        return 0
    }
}

private struct NodeEncoder: Encoder {
    let node: Node
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .keyed = node.kind {} else { node.kind = .keyed([:]) }
        return KeyedEncodingContainer(KeyedNode<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .unkeyed = node.kind {} else { node.kind = .unkeyed([]) }
        return UnkeyedNode(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueNode(node: node, codingPath: codingPath)
    }
}

private struct KeyedNode<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: Node
    let codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) throws { node.child(forKey: key.stringValue).kind = .leaf(NSNull()) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { leaf(value, key) }
    mutating func encode(_ value: String, forKey key: Key) throws { leaf(value, key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { leaf(value, key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { leaf(value, key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { leaf(value, key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { leaf(value, key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { leaf(value, key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { leaf(value, key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { leaf(value, key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { leaf(value, key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { leaf(value, key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { leaf(value, key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { leaf(value, key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { leaf(value, key) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try FormParameters.encode(value, into: node.child(forKey: key.stringValue), codingPath: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type,
                                                        forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        NodeEncoder(node: node.child(forKey: key.stringValue), codingPath: codingPath + [key]).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        NodeEncoder(node: node.child(forKey: key.stringValue), codingPath: codingPath + [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        NodeEncoder(node: node.child(forKey: "super"), codingPath: codingPath)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        NodeEncoder(node: node.child(forKey: key.stringValue), codingPath: codingPath + [key])
    }

    private func leaf(_ value: Any, _ key: Key) { node.child(forKey: key.stringValue).kind = .leaf(value) }
}

private struct UnkeyedNode: UnkeyedEncodingContainer {
    let node: Node
    let codingPath: [any CodingKey]
    var count: Int { node.count }

    mutating func encodeNil() throws { node.appendChild().kind = .leaf(NSNull()) }
    mutating func encode(_ value: Bool) throws { leaf(value) }
    mutating func encode(_ value: String) throws { leaf(value) }
    mutating func encode(_ value: Double) throws { leaf(value) }
    mutating func encode(_ value: Float) throws { leaf(value) }
    mutating func encode(_ value: Int) throws { leaf(value) }
    mutating func encode(_ value: Int8) throws { leaf(value) }
    mutating func encode(_ value: Int16) throws { leaf(value) }
    mutating func encode(_ value: Int32) throws { leaf(value) }
    mutating func encode(_ value: Int64) throws { leaf(value) }
    mutating func encode(_ value: UInt) throws { leaf(value) }
    mutating func encode(_ value: UInt8) throws { leaf(value) }
    mutating func encode(_ value: UInt16) throws { leaf(value) }
    mutating func encode(_ value: UInt32) throws { leaf(value) }
    mutating func encode(_ value: UInt64) throws { leaf(value) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        try FormParameters.encode(value, into: node.appendChild(), codingPath: codingPath)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        NodeEncoder(node: node.appendChild(), codingPath: codingPath).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        NodeEncoder(node: node.appendChild(), codingPath: codingPath).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { NodeEncoder(node: node.appendChild(), codingPath: codingPath) }

    private func leaf(_ value: Any) { node.appendChild().kind = .leaf(value) }
}

private struct SingleValueNode: SingleValueEncodingContainer {
    let node: Node
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws { node.kind = .leaf(NSNull()) }
    mutating func encode(_ value: Bool) throws { node.kind = .leaf(value) }
    mutating func encode(_ value: String) throws { node.kind = .leaf(value) }
    mutating func encode(_ value: Double) throws { node.kind = .leaf(value) }
    mutating func encode(_ value: Float) throws { node.kind = .leaf(value) }
    mutating func encode(_ value: Int) throws { node.kind = .leaf(value) }
    mutating func encode(_ value: Int8) throws { node.kind = .leaf(value) }
    mutating func encode(_ value: Int16) throws { node.kind = .leaf(value) }
    mutating func encode(_ value: Int32) throws { node.kind = .leaf(value) }
    mutating func encode(_ value: Int64) throws { node.kind = .leaf(value) }
    mutating func encode(_ value: UInt) throws { node.kind = .leaf(value) }
    mutating func encode(_ value: UInt8) throws { node.kind = .leaf(value) }
    mutating func encode(_ value: UInt16) throws { node.kind = .leaf(value) }
    mutating func encode(_ value: UInt32) throws { node.kind = .leaf(value) }
    mutating func encode(_ value: UInt64) throws { node.kind = .leaf(value) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        try FormParameters.encode(value, into: node, codingPath: codingPath)
    }
}
