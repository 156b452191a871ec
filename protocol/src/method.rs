//! The typed method table: every request method and notification the protocol defines, with
//! its wire name, params type and response type.
//!
//! [`Method`] and [`NotificationMethod`] tie a wire name to its types so that callers write
//! `client.call::<DaemonStatus>(params)` and the daemon parses params with the right type.
//! The descriptors in [`crate::v1::METHODS`] and [`crate::v1::NOTIFICATIONS`] drive schema
//! export and the method list advertised at `initialize`.

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// A request method: its wire name and its params and response types.
pub trait Method {
    /// The wire name, `resource/verb`.
    const NAME: &'static str;
    /// The `params` payload.
    type Params: Serialize + DeserializeOwned + JsonSchema + Send + 'static;
    /// The `result` payload.
    type Response: Serialize + DeserializeOwned + JsonSchema + Send + 'static;
}

/// A notification: its wire name and params type.
pub trait NotificationMethod {
    /// The wire name, `resource/verb`.
    const NAME: &'static str;
    /// The `params` payload.
    type Params: Serialize + DeserializeOwned + JsonSchema + Send + 'static;
}

/// Which side sends a notification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Sent by the daemon to clients.
    DaemonToClient,
    /// Sent by clients to the daemon.
    ClientToDaemon,
}

/// One entry of the request method table.
#[derive(Clone, Copy)]
pub struct MethodDescriptor {
    /// The wire name.
    pub name: &'static str,
    /// The doc comment of the method, used in generated schemas.
    pub summary: &'static str,
    /// Adds the params schema to a generator and returns a reference to it.
    pub params_schema: fn(&mut SchemaGenerator) -> Schema,
    /// Adds the response schema to a generator and returns a reference to it.
    pub response_schema: fn(&mut SchemaGenerator) -> Schema,
}

/// One entry of the notification table.
#[derive(Clone, Copy)]
pub struct NotificationDescriptor {
    /// The wire name.
    pub name: &'static str,
    /// The doc comment of the notification.
    pub summary: &'static str,
    /// Who sends it.
    pub direction: Direction,
    /// Adds the params schema to a generator and returns a reference to it.
    pub params_schema: fn(&mut SchemaGenerator) -> Schema,
}

/// Declares request methods: a unit struct per method implementing [`Method`], and the
/// `METHODS` descriptor table.
#[macro_export]
#[doc(hidden)]
macro_rules! method_table {
    ( $( $(#[doc = $doc:literal])* $ty:ident = $name:literal ($params:ty) -> $response:ty; )* ) => {
        $(
            $(#[doc = $doc])*
            #[derive(Clone, Copy, Debug)]
            pub struct $ty;

            impl $crate::method::Method for $ty {
                const NAME: &'static str = $name;
                type Params = $params;
                type Response = $response;
            }
        )*

        /// Every request method of this protocol version as a value: [`MethodKind::from_name`]
        /// maps a wire name to it, and a `match` on it must name every method (so a method
        /// added to the table has no handler until the compiler is told).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum MethodKind {
            $(
                $(#[doc = $doc])*
                $ty,
            )*
        }

        impl MethodKind {
            /// The method called `name` on the wire.
            pub fn from_name(name: &str) -> Option<MethodKind> {
                match name {
                    $( $name => Some(MethodKind::$ty), )*
                    _ => None,
                }
            }

            /// Its name on the wire.
            pub fn name(self) -> &'static str {
                match self {
                    $( MethodKind::$ty => $name, )*
                }
            }
        }

        /// Every request method of this protocol version, in documentation order.
        pub const METHODS: &[$crate::method::MethodDescriptor] = &[
            $(
                $crate::method::MethodDescriptor {
                    name: $name,
                    summary: concat!($($doc, "\n"),*),
                    params_schema: |generator| generator.subschema_for::<$params>(),
                    response_schema: |generator| generator.subschema_for::<$response>(),
                },
            )*
        ];
    };
}

/// Declares notifications: a unit struct per notification implementing
/// [`NotificationMethod`], and the `NOTIFICATIONS` descriptor table.
#[macro_export]
#[doc(hidden)]
macro_rules! notification_table {
    ( $( $(#[doc = $doc:literal])* $ty:ident = $name:literal ($direction:ident, $params:ty); )* ) => {
        $(
            $(#[doc = $doc])*
            #[derive(Clone, Copy, Debug)]
            pub struct $ty;

            impl $crate::method::NotificationMethod for $ty {
                const NAME: &'static str = $name;
                type Params = $params;
            }
        )*

        /// Every notification of this protocol version, in documentation order.
        pub const NOTIFICATIONS: &[$crate::method::NotificationDescriptor] = &[
            $(
                $crate::method::NotificationDescriptor {
                    name: $name,
                    summary: concat!($($doc, "\n"),*),
                    direction: $crate::method::Direction::$direction,
                    params_schema: |generator| generator.subschema_for::<$params>(),
                },
            )*
        ];
    };
}
