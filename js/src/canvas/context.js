// What node components need from the app without taking it as props (props would change
// their memo keys): a stable `send(action, args)`.
import { createContext, useContext } from "react";

export const SendContext = createContext(() => {});
export const useSend = () => useContext(SendContext);
